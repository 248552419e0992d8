"""idempotency keys on the JSON creates; every failed condition kept with the outcome

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-26 01:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "idempotent_requests",
        sa.Column("scope", sa.String(length=64), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("sealed_body", sa.LargeBinary(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_idempotent_requests")),
        sa.UniqueConstraint("scope", "key", name=op.f("uq_idempotent_requests_scope_key")),
    )
    op.create_index(
        "ix_idempotent_requests_expires_at", "idempotent_requests", ["expires_at"], unique=False
    )
    for table in ("individuals", "policy_requests"):
        with op.batch_alter_table(table) as batch_op:
            batch_op.add_column(sa.Column("failed_conditions", sa.JSON(), nullable=True))


def downgrade():
    for table in ("policy_requests", "individuals"):
        with op.batch_alter_table(table) as batch_op:
            batch_op.drop_column("failed_conditions")
    op.drop_index("ix_idempotent_requests_expires_at", table_name="idempotent_requests")
    op.drop_table("idempotent_requests")
