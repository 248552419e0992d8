"""trust sources: PEM anchors and signed trust lists per organization, chosen by verifications

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-26 00:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "trust_sources",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column(
            "kind",
            sa.Enum(
                "PEM",
                "TRUSTED_LIST",
                "LIST_OF_TRUSTED_LISTS",
                "LIST_OF_TRUSTED_ENTITIES",
                "VICAL",
                name="sourcekind",
                native_enum=False,
                length=40,
            ),
            nullable=False,
        ),
        sa.Column("url", sa.String(length=2000), nullable=True),
        sa.Column("certificates_pem", sa.Text(), nullable=False),
        sa.Column("territories", sa.JSON(), nullable=False),
        sa.Column("service_types", sa.JSON(), nullable=False),
        sa.Column("entries", sa.JSON(), nullable=False),
        sa.Column("lists", sa.JSON(), nullable=False),
        sa.Column("entry_count", sa.Integer(), nullable=False),
        sa.Column("sequence_number", sa.Integer(), nullable=True),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_update", sa.DateTime(timezone=True), nullable=True),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("last_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("last_error_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_trust_sources_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_trust_sources")),
    )
    with op.batch_alter_table("trust_sources", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_trust_sources_organization_id"), ["organization_id"], unique=False
        )
    with op.batch_alter_table("verifications", schema=None) as batch_op:
        batch_op.add_column(sa.Column("trust_sources", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("verifications", schema=None) as batch_op:
        batch_op.drop_column("trust_sources")
    with op.batch_alter_table("trust_sources", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_trust_sources_organization_id"))
    op.drop_table("trust_sources")
