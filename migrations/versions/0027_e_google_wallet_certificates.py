"""Google Wallet registrar leaves, the privacy policy they bind, the EU access certificate profile

Revision ID: 0027_e_google_wallet_certificates
Revises: 0026_a_opened_by
Create Date: 2026-12-02 00:40:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_e_google_wallet_certificates"
down_revision = "0026_a_opened_by"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("verifier_keys") as batch:
        batch.add_column(sa.Column("profile", sa.String(length=20), nullable=True))
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
    with op.batch_alter_table("verifier_keys") as batch:
        batch.drop_column("profile")
