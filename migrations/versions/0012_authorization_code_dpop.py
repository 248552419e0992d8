"""issuer: pushed authorization requests and codes, DPoP-bound access tokens, seen DPoP proofs

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-26 00:10:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "issuer_authorization_requests",
        sa.Column("credential_id", sa.Uuid(), nullable=False),
        sa.Column("request_uri_hash", sa.String(length=64), nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("redirect_uri", sa.Text(), nullable=False),
        sa.Column("code_challenge", sa.String(length=128), nullable=False),
        sa.Column("state", sa.Text(), nullable=True),
        sa.Column("by_authorization_details", sa.Boolean(), nullable=False),
        sa.Column("dpop_jkt", sa.String(length=64), nullable=True),
        sa.Column("mail_code_hash", sa.String(length=64), nullable=True),
        sa.Column("mail_code_failures", sa.Integer(), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("approved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("code_hash", sa.String(length=64), nullable=True),
        sa.Column("code_expires_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("code_used_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["credential_id"],
            ["credentials.id"],
            name=op.f("fk_issuer_authorization_requests_credential_id_credentials"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_issuer_authorization_requests")),
        sa.UniqueConstraint(
            "request_uri_hash", name=op.f("uq_issuer_authorization_requests_request_uri_hash")
        ),
        sa.UniqueConstraint("code_hash", name=op.f("uq_issuer_authorization_requests_code_hash")),
    )
    with op.batch_alter_table("issuer_authorization_requests", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_issuer_authorization_requests_credential_id"),
            ["credential_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_issuer_authorization_requests_expires_at"), ["expires_at"], unique=False
        )

    op.create_table(
        "issuer_dpop_proofs",
        sa.Column("proof_key", sa.String(length=64), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("proof_key", name=op.f("pk_issuer_dpop_proofs")),
    )
    with op.batch_alter_table("issuer_dpop_proofs", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_issuer_dpop_proofs_expires_at"), ["expires_at"], unique=False
        )

    with op.batch_alter_table("issuer_access_tokens", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dpop_jkt", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("credential_identifier", sa.String(length=64), nullable=True))

    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "authorization_code_by_mail",
                sa.Boolean(),
                nullable=False,
                server_default=sa.false(),
            )
        )

    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.add_column(sa.Column("issuer_state_hash", sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_credentials_issuer_state_hash"), ["issuer_state_hash"]
        )


def downgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.drop_column("authorization_code_by_mail")
    with op.batch_alter_table("credentials", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_credentials_issuer_state_hash"), type_="unique")
        batch_op.drop_column("issuer_state_hash")
    with op.batch_alter_table("issuer_access_tokens", schema=None) as batch_op:
        batch_op.drop_column("credential_identifier")
        batch_op.drop_column("dpop_jkt")
    with op.batch_alter_table("issuer_dpop_proofs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_issuer_dpop_proofs_expires_at"))
    op.drop_table("issuer_dpop_proofs")
    with op.batch_alter_table("issuer_authorization_requests", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_issuer_authorization_requests_expires_at"))
        batch_op.drop_index(batch_op.f("ix_issuer_authorization_requests_credential_id"))
    op.drop_table("issuer_authorization_requests")
