"""schemas: display fields for type metadata; issuer certificates (x5c) and issuer roots

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-26 00:55:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.add_column(sa.Column("background_color", sa.String(length=7), nullable=True))
        batch_op.add_column(sa.Column("text_color", sa.String(length=7), nullable=True))
        batch_op.add_column(sa.Column("logo_uri", sa.String(length=2000), nullable=True))
        batch_op.add_column(sa.Column("logo_alt_text", sa.String(length=200), nullable=True))
    with op.batch_alter_table("issuer_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("certificate_chain_pem", sa.Text(), nullable=True))
    op.create_table(
        "issuer_roots",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("certificate_pem", sa.Text(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=True),
        sa.Column("token_key_label", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_issuer_roots_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_issuer_roots")),
    )
    with op.batch_alter_table("issuer_roots", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_issuer_roots_organization_id"), ["organization_id"], unique=False
        )
        batch_op.create_index(
            "uq_issuer_roots_current",
            ["organization_id"],
            unique=True,
            sqlite_where=sa.text("retired_at IS NULL"),
            postgresql_where=sa.text("retired_at IS NULL"),
        )


def downgrade():
    with op.batch_alter_table("issuer_roots", schema=None) as batch_op:
        batch_op.drop_index("uq_issuer_roots_current")
        batch_op.drop_index(batch_op.f("ix_issuer_roots_organization_id"))
    op.drop_table("issuer_roots")
    with op.batch_alter_table("issuer_keys", schema=None) as batch_op:
        batch_op.drop_column("certificate_chain_pem")
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.drop_column("logo_alt_text")
        batch_op.drop_column("logo_uri")
        batch_op.drop_column("text_color")
        batch_op.drop_column("background_color")
