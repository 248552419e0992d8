"""issuer_keys: a key may live in a PKCS#11 token (its label) instead of sealed in the row

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-25 23:59:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("issuer_keys", schema=None) as batch_op:
        batch_op.add_column(sa.Column("token_key_label", sa.String(length=128), nullable=True))
        batch_op.alter_column("sealed_private_key", existing_type=sa.LargeBinary(), nullable=True)


def downgrade():
    with op.batch_alter_table("issuer_keys", schema=None) as batch_op:
        batch_op.alter_column("sealed_private_key", existing_type=sa.LargeBinary(), nullable=False)
        batch_op.drop_column("token_key_label")
