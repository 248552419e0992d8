"""an organization's api_compatibility: Verity's answer shape, or Socious Verify's beside it

Revision ID: 0026_f_api_compatibility
Revises: 0025_prism_issuers
Create Date: 2026-12-01 20:40:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0026_f_api_compatibility"
down_revision = "0025_prism_issuers"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "api_compatibility",
                sa.Enum(
                    "verity",
                    "socious-verify",
                    name="apicompatibility",
                    native_enum=False,
                    length=20,
                ),
                server_default="verity",
                nullable=False,
            )
        )


def downgrade():
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("api_compatibility")
