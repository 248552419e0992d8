"""DIDComm: a verification's wallet protocols, a credential's protocol, organizations' DIDComm
identities, exchanges

Revision ID: 0024_didcomm
Revises: 0023_recommended_wallets
Create Date: 2026-11-28 11:00:00.000000

"""

from alembic import op
import sqlalchemy as sa



# revision identifiers, used by Alembic.
revision = "0024_didcomm"
down_revision = "0023_recommended_wallets"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.add_column(sa.Column("wallet_protocols", sa.JSON(), nullable=True))
    with op.batch_alter_table("credentials") as batch_op:
        batch_op.add_column(
            sa.Column("protocol", sa.String(length=20), nullable=False, server_default="openid4vci")
        )
    op.create_table(
        "didcomm_identities",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("endpoint", sa.String(length=2000), nullable=False),
        sa.Column("did", sa.Text(), nullable=False),
        sa.Column("sealed_keys", sa.LargeBinary(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_didcomm_identities_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_didcomm_identities")),
        sa.UniqueConstraint("did", name=op.f("uq_didcomm_identities_did")),
        sa.UniqueConstraint(
            "organization_id", "endpoint", name=op.f("uq_didcomm_identities_organization_id_endpoint")
        ),
    )
    with op.batch_alter_table("didcomm_identities") as batch_op:
        batch_op.create_index(
            batch_op.f("ix_didcomm_identities_organization_id"), ["organization_id"], unique=False
        )
    op.create_table(
        "didcomm_exchanges",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("invitation_id", sa.String(length=100), nullable=False),
        sa.Column("presentation_request_id", sa.Uuid(), nullable=True),
        sa.Column("credential_id", sa.Uuid(), nullable=True),
        sa.Column("identity_id", sa.Uuid(), nullable=False),
        sa.Column("holder_did", sa.Text(), nullable=False),
        sa.Column("request_message_id", sa.String(length=100), nullable=False),
        sa.Column("challenge", sa.String(length=100), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("presented_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["identity_id"],
            ["didcomm_identities.id"],
            name=op.f("fk_didcomm_exchanges_identity_id_didcomm_identities"),
            ondelete="CASCADE",
        ),
        sa.CheckConstraint(
            "(presentation_request_id IS NULL) <> (credential_id IS NULL)",
            name=op.f("ck_didcomm_exchanges_one_subject"),
        ),
        sa.ForeignKeyConstraint(
            ["credential_id"],
            ["credentials.id"],
            name=op.f("fk_didcomm_exchanges_credential_id_credentials"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["presentation_request_id"],
            ["presentation_requests.id"],
            name=op.f("fk_didcomm_exchanges_presentation_request_id_presentation_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_didcomm_exchanges")),
        sa.UniqueConstraint("invitation_id", name=op.f("uq_didcomm_exchanges_invitation_id")),
        sa.UniqueConstraint(
            "request_message_id", name=op.f("uq_didcomm_exchanges_request_message_id")
        ),
    )
    with op.batch_alter_table("didcomm_exchanges") as batch_op:
        batch_op.create_index(
            batch_op.f("ix_didcomm_exchanges_identity_id"), ["identity_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_didcomm_exchanges_presentation_request_id"),
            ["presentation_request_id"],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f("ix_didcomm_exchanges_credential_id"), ["credential_id"], unique=False
        )


def downgrade():
    op.drop_table("didcomm_exchanges")
    op.drop_table("didcomm_identities")
    with op.batch_alter_table("credentials") as batch_op:
        batch_op.drop_column("protocol")
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.drop_column("wallet_protocols")
