"""zero-knowledge answers waiting for their proof's check, off the request

Revision ID: 0028_zk_checks
Revises: 0027_d_registration_certificates
Create Date: 2026-12-02 04:00:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0028_zk_checks"
down_revision = "0027_d_registration_certificates"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "zk_checks",
        sa.Column("request_id", sa.Uuid(), nullable=False),
        sa.Column("presentation", sa.Text(), nullable=False),
        sa.Column("binding", sa.JSON(), nullable=False),
        sa.Column("response_code_hash", sa.String(length=64), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["request_id"],
            ["presentation_requests.id"],
            name=op.f("fk_zk_checks_request_id_presentation_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_zk_checks")),
        sa.UniqueConstraint("request_id", name=op.f("uq_zk_checks_request_id")),
    )


def downgrade():
    op.drop_table("zk_checks")
