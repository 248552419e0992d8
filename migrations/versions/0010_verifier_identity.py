"""verifier identity: each organization's request-signing keys, certificates and registration

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-25 23:55:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

ACTIVE = "activated_at IS NOT NULL AND retired_at IS NULL"


def upgrade():
    op.create_table(
        "verifier_keys",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=False),
        sa.Column("csr_pem", sa.Text(), nullable=False),
        sa.Column("country", sa.String(length=2), nullable=False),
        sa.Column("dns_name", sa.String(length=253), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("chain_pem", sa.Text(), nullable=True),
        sa.Column("client_id_prefix", sa.String(length=20), nullable=True),
        sa.Column("client_id_name", sa.String(length=253), nullable=True),
        sa.Column("not_after", sa.DateTime(timezone=True), nullable=True),
        sa.Column("activated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_verifier_keys_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_verifier_keys")),
    )
    with op.batch_alter_table("verifier_keys", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_verifier_keys_organization_id"), ["organization_id"], unique=False
        )
        batch_op.create_index(
            "uq_verifier_keys_active",
            ["organization_id"],
            unique=True,
            sqlite_where=sa.text(ACTIVE),
            postgresql_where=sa.text(ACTIVE),
        )

    op.create_table(
        "verifier_profiles",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("logo_uri", sa.String(length=2000), nullable=True),
        sa.Column("registration_certificate", sa.Text(), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_verifier_profiles_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_verifier_profiles")),
    )

    with op.batch_alter_table("presentation_requests", schema=None) as batch_op:
        batch_op.add_column(sa.Column("verifier_key_id", sa.Uuid(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f("fk_presentation_requests_verifier_key_id_verifier_keys"),
            "verifier_keys",
            ["verifier_key_id"],
            ["id"],
            ondelete="SET NULL",
        )


def downgrade():
    with op.batch_alter_table("presentation_requests", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("fk_presentation_requests_verifier_key_id_verifier_keys"),
            type_="foreignkey",
        )
        batch_op.drop_column("verifier_key_id")
    op.drop_table("verifier_profiles")
    with op.batch_alter_table("verifier_keys", schema=None) as batch_op:
        batch_op.drop_index("uq_verifier_keys_active")
        batch_op.drop_index(batch_op.f("ix_verifier_keys_organization_id"))
    op.drop_table("verifier_keys")
