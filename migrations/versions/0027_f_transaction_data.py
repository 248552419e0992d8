"""OpenID4VP transaction data: the types an organization enables, and what each individual
and policy request asks the person to authorize

Revision ID: 0027_f_transaction_data
Revises: 0026_a_opened_by
Create Date: 2026-12-02 00:30:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_f_transaction_data"
down_revision = "0026_a_opened_by"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("organizations") as batch:
        batch.add_column(sa.Column("transaction_data_types", sa.JSON(), nullable=True))
    for table in ("individuals", "policy_requests"):
        with op.batch_alter_table(table) as batch:
            batch.add_column(sa.Column("transaction_data", sa.JSON(), nullable=True))


def downgrade():
    for table in ("policy_requests", "individuals"):
        with op.batch_alter_table(table) as batch:
            batch.drop_column("transaction_data")
    with op.batch_alter_table("organizations") as batch:
        batch.drop_column("transaction_data_types")
