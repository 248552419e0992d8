"""each webhook delivery attempt keeps what was sent and answered

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-26 03:30:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

FLAGS = (
    "request_body_cut",
    "request_carries_claims",
    "response_headers_cut",
    "response_body_cut",
)


def upgrade():
    with op.batch_alter_table("webhook_attempts") as batch_op:
        batch_op.add_column(sa.Column("request_method", sa.String(length=10), nullable=True))
        batch_op.add_column(sa.Column("request_url", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("request_headers", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("request_body", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("response_headers", sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column("response_body", sa.Text(), nullable=True))
        for flag in FLAGS:
            batch_op.add_column(
                sa.Column(flag, sa.Boolean(), server_default=sa.false(), nullable=False)
            )


def downgrade():
    with op.batch_alter_table("webhook_attempts") as batch_op:
        for flag in reversed(FLAGS):
            batch_op.drop_column(flag)
        for column in (
            "response_body",
            "response_headers",
            "request_body",
            "request_headers",
            "request_url",
            "request_method",
        ):
            batch_op.drop_column(column)
