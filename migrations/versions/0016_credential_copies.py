"""credential copies: one status list entry and holder key per signed copy (batches)

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-26 01:00:00.000000

"""

import uuid

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade():
    copies = op.create_table(
        "credential_copies",
        sa.Column("credential_id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status_list", sa.Integer(), nullable=False),
        sa.Column("status_index", sa.Integer(), nullable=False),
        sa.Column("holder_key_thumbprint", sa.String(length=64), nullable=True),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["credential_id"],
            ["credentials.id"],
            name=op.f("fk_credential_copies_credential_id_credentials"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_credential_copies_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credential_copies")),
        sa.UniqueConstraint(
            "credential_id", "number", name=op.f("uq_credential_copies_credential_id_number")
        ),
        sa.UniqueConstraint(
            "organization_id",
            "status_list",
            "status_index",
            name=op.f("uq_credential_copies_organization_id_status_list_status_index"),
        ),
    )
    with op.batch_alter_table("credential_copies", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_credential_copies_credential_id"), ["credential_id"], unique=False
        )
    # Copy 0 of every credential already offered or issued: the entry it holds and its key.
    credentials = op.get_bind().execute(
        sa.text(
            "SELECT id, organization_id, status_list, status_index, holder_key_thumbprint, "
            "issued_at FROM credentials"
        )
    )
    rows = [
        {
            "id": uuid.uuid4(),
            "credential_id": row.id,
            "organization_id": row.organization_id,
            "number": 0,
            "status_list": row.status_list,
            "status_index": row.status_index,
            "holder_key_thumbprint": row.holder_key_thumbprint,
            "issued_at": row.issued_at,
        }
        for row in credentials
    ]
    if rows:
        op.bulk_insert(copies, rows)


def downgrade():
    with op.batch_alter_table("credential_copies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_credential_copies_credential_id"))
    op.drop_table("credential_copies")
