"""did:prism long forms learnt from presentations, pinned per organization

Revision ID: 0026_e_issuers_seen
Revises: 0025_prism_issuers
Create Date: 2026-12-01 20:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0026_e_issuers_seen"
down_revision = "0025_prism_issuers"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("presentation_attempts") as batch:
        batch.add_column(sa.Column("issuer_long_form", sa.Text(), nullable=True))
    op.create_table(
        "pinned_prism_dids",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("did", sa.String(length=100), nullable=False),
        sa.Column("long_form", sa.Text(), nullable=False),
        sa.Column("verification_id", sa.Uuid(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_pinned_prism_dids_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["verification_id"],
            ["verifications.id"],
            name=op.f("fk_pinned_prism_dids_verification_id_verifications"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pinned_prism_dids")),
        sa.UniqueConstraint(
            "organization_id", "did", name=op.f("uq_pinned_prism_dids_organization_id_did")
        ),
    )
    op.create_index(
        op.f("ix_pinned_prism_dids_organization_id"),
        "pinned_prism_dids",
        ["organization_id"],
        unique=False,
    )


def downgrade():
    op.drop_index(op.f("ix_pinned_prism_dids_organization_id"), table_name="pinned_prism_dids")
    op.drop_table("pinned_prism_dids")
    with op.batch_alter_table("presentation_attempts") as batch:
        batch.drop_column("issuer_long_form")
