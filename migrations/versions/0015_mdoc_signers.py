"""mdoc signers: each organization's IACA root and document signer certificate

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-26 01:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "mdoc_signers",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("iaca_certificate", sa.LargeBinary(), nullable=False),
        sa.Column("iaca_sealed_private_key", sa.LargeBinary(), nullable=True),
        sa.Column("iaca_token_key_label", sa.String(length=128), nullable=True),
        sa.Column("document_signer_certificate", sa.LargeBinary(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=True),
        sa.Column("token_key_label", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_mdoc_signers_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mdoc_signers")),
        sa.UniqueConstraint("organization_id", name=op.f("uq_mdoc_signers_organization_id")),
    )


def downgrade():
    op.drop_table("mdoc_signers")
