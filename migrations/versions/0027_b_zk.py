"""a verification may ask its age claim as a zero-knowledge proof (mso_mdoc_zk)

Revision ID: 0027_b_zk
Revises: 0027_e_access_certificates
Create Date: 2026-12-02 00:30:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_b_zk"
down_revision = "0027_e_access_certificates"
branch_labels = None
depends_on = None


def upgrade():
    # Every verification saved before asks for the credential itself, as it always did.
    with op.batch_alter_table("verifications") as batch:
        batch.add_column(sa.Column("zk", sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade():
    with op.batch_alter_table("verifications") as batch:
        batch.drop_column("zk")
