"""join the three 0026 revisions (who opened, Socious Verify's answer shape, issuers seen)
so one head upgrades them all; nothing to change in the schema

Revision ID: 0026_k_merge_heads
Revises: 0026_a_opened_by, 0026_e_issuers_seen, 0026_f_api_compatibility
Create Date: 2026-12-01 21:00:00.000000

"""

# revision identifiers, used by Alembic.
revision = "0026_k_merge_heads"
down_revision = ("0026_a_opened_by", "0026_e_issuers_seen", "0026_f_api_compatibility")
branch_labels = None
depends_on = None


def upgrade():
    pass


def downgrade():
    pass
