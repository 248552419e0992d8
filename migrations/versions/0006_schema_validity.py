"""schemas: how long issued credentials stay valid (their exp)

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-23 11:40:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.add_column(sa.Column("validity_days", sa.Integer(), nullable=True))


def downgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.drop_column("validity_days")
