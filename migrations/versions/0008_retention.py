"""verifications: how long claims are kept and how often status is checked again;
individuals: the kept status reference and when a later check found it revoked

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 13:40:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("verifications", schema=None) as batch_op:
        # Existing verifications get the defaults new ones get.
        batch_op.add_column(
            sa.Column("retention_days", sa.Integer(), nullable=False, server_default="30")
        )
        batch_op.add_column(
            sa.Column("status_check_hours", sa.Integer(), nullable=False, server_default="24")
        )
    with op.batch_alter_table("individuals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("status_reference", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("status_checked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_individuals_status_checked_at"), ["status_checked_at"], unique=False
        )


def downgrade():
    with op.batch_alter_table("individuals", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_individuals_status_checked_at"))
        batch_op.drop_column("revoked_at")
        batch_op.drop_column("status_checked_at")
        batch_op.drop_column("status_reference")
    with op.batch_alter_table("verifications", schema=None) as batch_op:
        batch_op.drop_column("status_check_hours")
        batch_op.drop_column("retention_days")
