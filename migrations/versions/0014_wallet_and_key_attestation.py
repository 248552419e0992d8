"""issuer: wallet attestation setting per organization, key attestations per schema

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-26 01:00:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "wallet_attestation",
                sa.Enum(
                    "required",
                    "optional",
                    "off",
                    name="walletattestation",
                    native_enum=False,
                    length=10,
                ),
                server_default="optional",
                nullable=False,
            )
        )
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column(
                "key_attestations_required",
                sa.Boolean(),
                server_default=sa.false(),
                nullable=False,
            )
        )


def downgrade():
    with op.batch_alter_table("schemas", schema=None) as batch_op:
        batch_op.drop_column("key_attestations_required")
    with op.batch_alter_table("organizations", schema=None) as batch_op:
        batch_op.drop_column("wallet_attestation")
