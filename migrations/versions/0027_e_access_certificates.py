"""Google Wallet registrar leaves and the privacy policy they bind; EU access certificates:
their profile, one per intermediated relying party, chosen per verification

Revision ID: 0027_e_access_certificates
Revises: 0027_f_transaction_data
Create Date: 2026-12-02 00:40:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_e_access_certificates"
down_revision = "0027_f_transaction_data"
branch_labels = None
depends_on = None

ACTIVE = "activated_at IS NOT NULL AND retired_at IS NULL"


def upgrade():
    with op.batch_alter_table("verifier_keys") as batch:
        batch.add_column(sa.Column("profile", sa.String(length=20), nullable=True))
        batch.add_column(
            sa.Column("relying_party", sa.String(length=200), server_default="", nullable=False)
        )
    # One key in use per organization and intermediated relying party (before: per organization).
    op.drop_index("uq_verifier_keys_active", table_name="verifier_keys")
    op.create_index(
        "uq_verifier_keys_active",
        "verifier_keys",
        ["organization_id", "relying_party"],
        unique=True,
        sqlite_where=sa.text(ACTIVE),
        postgresql_where=sa.text(ACTIVE),
    )
    with op.batch_alter_table("verifications") as batch:
        batch.add_column(sa.Column("relying_party", sa.String(length=200), nullable=True))
    with op.batch_alter_table("verifier_profiles") as batch:
        batch.add_column(sa.Column("privacy_policy_uri", sa.String(length=2000), nullable=True))
    op.create_table(
        "google_wallet_certificates",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("sealed_private_key", sa.LargeBinary(), nullable=False),
        sa.Column("leaf_pem", sa.Text(), nullable=False),
        sa.Column("metadata_bytes", sa.LargeBinary(), nullable=False),
        sa.Column("not_after", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_google_wallet_certificates_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_google_wallet_certificates")),
    )


def downgrade():
    op.drop_table("google_wallet_certificates")
    with op.batch_alter_table("verifier_profiles") as batch:
        batch.drop_column("privacy_policy_uri")
    with op.batch_alter_table("verifications") as batch:
        batch.drop_column("relying_party")
    op.drop_index("uq_verifier_keys_active", table_name="verifier_keys")
    op.create_index(
        "uq_verifier_keys_active",
        "verifier_keys",
        ["organization_id"],
        unique=True,
        sqlite_where=sa.text(ACTIVE),
        postgresql_where=sa.text(ACTIVE),
    )
    with op.batch_alter_table("verifier_keys") as batch:
        batch.drop_column("relying_party")
        batch.drop_column("profile")
