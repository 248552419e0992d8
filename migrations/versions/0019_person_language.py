"""the person's language and help: a verification's purpose per language, an organization's
support contact

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-26 01:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.add_column(sa.Column("description_translations", sa.JSON(), nullable=True))
    with op.batch_alter_table("organizations") as batch_op:
        batch_op.add_column(sa.Column("support_contact", sa.String(length=320), nullable=True))


def downgrade():
    with op.batch_alter_table("organizations") as batch_op:
        batch_op.drop_column("support_contact")
    with op.batch_alter_table("verifications") as batch_op:
        batch_op.drop_column("description_translations")
