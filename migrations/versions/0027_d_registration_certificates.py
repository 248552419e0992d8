"""registration certificates (ETSI TS 119 475), checked at upload, named by verifications

Revision ID: 0027_d_registration_certificates
Revises: 0027_c_event_streams
Create Date: 2026-12-02 00:30:00.000000

The opaque registration certificate of the verifier profile was never checked; it is dropped
rather than carried over, so that nothing unchecked travels in a request. Organizations
upload theirs again, where it is checked.
"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_d_registration_certificates"
down_revision = "0027_c_event_streams"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "registration_certificates",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("token", sa.Text(), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("sub", sa.String(length=500), nullable=False),
        sa.Column("name", sa.String(length=500), nullable=False),
        sa.Column("intended_use_id", sa.String(length=500), nullable=True),
        sa.Column("purpose", sa.JSON(), nullable=False),
        sa.Column("credentials", sa.JSON(), nullable=False),
        sa.Column("registrar", sa.String(length=1000), nullable=False),
        sa.Column("access_certificate_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.JSON(), nullable=True),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_registration_certificates_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registration_certificates")),
        sa.UniqueConstraint(
            "organization_id",
            "token_sha256",
            name=op.f("uq_registration_certificates_organization_id_token_sha256"),
        ),
    )
    with op.batch_alter_table("registration_certificates") as batch:
        batch.create_index(
            batch.f("ix_registration_certificates_organization_id"),
            ["organization_id"],
            unique=False,
        )
    for table in ("verifications", "policy_requests"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("registration_certificate_id", sa.Uuid(), nullable=True))
            batch.create_foreign_key(
                batch.f(f"fk_{table}_registration_certificate_id_registration_certificates"),
                "registration_certificates",
                ["registration_certificate_id"],
                ["id"],
                ondelete="SET NULL",
            )
    with op.batch_alter_table("verifier_profiles") as batch:
        batch.drop_column("registration_certificate")


def downgrade():
    with op.batch_alter_table("verifier_profiles") as batch:
        batch.add_column(sa.Column("registration_certificate", sa.Text(), nullable=True))
    for table in ("policy_requests", "verifications"):
        with op.batch_alter_table(table) as batch:
            batch.drop_constraint(
                batch.f(f"fk_{table}_registration_certificate_id_registration_certificates"),
                type_="foreignkey",
            )
            batch.drop_column("registration_certificate_id")
    op.drop_table("registration_certificates")
