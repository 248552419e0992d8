"""schemas: the credential format, and the mdoc and W3C VC type identifiers

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 09:45:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("format", sa.String(length=20), nullable=False, server_default="dc+sd-jwt")
        )
        batch_op.add_column(sa.Column("doctype", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("namespace", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("types", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.drop_column("types")
        batch_op.drop_column("namespace")
        batch_op.drop_column("doctype")
        batch_op.drop_column("format")
