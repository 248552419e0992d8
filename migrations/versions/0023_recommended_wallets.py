"""a verification may name the wallet apps its organization recommends

Revision ID: 0023_recommended_wallets
Revises: 0022_credential_uploads
Create Date: 2026-11-28 08:25:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0023_recommended_wallets"
down_revision = "0022_credential_uploads"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.add_column(sa.Column("recommended_wallets", sa.JSON(), nullable=True))


def downgrade():
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.drop_column("recommended_wallets")
