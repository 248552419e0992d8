"""each organization's did:prism issuer, for credentials issued over DIDComm

Revision ID: 0025_prism_issuers
Revises: 0024_didcomm
Create Date: 2026-11-29 09:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0025_prism_issuers"
down_revision = "0024_didcomm"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "prism_issuers",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("did", sa.Text(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=True),
        sa.Column("token_key_label", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_prism_issuers_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prism_issuers")),
        sa.UniqueConstraint("did", name=op.f("uq_prism_issuers_did")),
        sa.UniqueConstraint("organization_id", name=op.f("uq_prism_issuers_organization_id")),
    )


def downgrade():
    op.drop_table("prism_issuers")
