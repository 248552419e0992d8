"""who opened each individual, and who may open one without the integration key

Revision ID: 0026_a_opened_by
Revises: 0026_e_issuers_seen
Create Date: 2026-12-01 20:30:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0026_a_opened_by"
down_revision = "0026_e_issuers_seen"
branch_labels = None
depends_on = None


def upgrade():
    # Individuals opened before this was recorded read "anonymous": their opener is unknown,
    # and a backend must not take them for its own.
    with op.batch_alter_table("individuals") as batch:
        batch.add_column(
            sa.Column("opened_by", sa.String(length=10), server_default="anonymous", nullable=False)
        )
        batch.add_column(sa.Column("opened_by_integration_id", sa.Uuid(), nullable=True))
    with op.batch_alter_table("verifications") as batch:
        batch.add_column(
            sa.Column(
                "anonymous_open", sa.String(length=10), server_default="allowed", nullable=False
            )
        )
        batch.add_column(sa.Column("sealed_link_secret", sa.LargeBinary(), nullable=True))


def downgrade():
    with op.batch_alter_table("verifications") as batch:
        batch.drop_column("sealed_link_secret")
        batch.drop_column("anonymous_open")
    with op.batch_alter_table("individuals") as batch:
        batch.drop_column("opened_by_integration_id")
        batch.drop_column("opened_by")
