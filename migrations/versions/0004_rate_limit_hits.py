"""rate limit hits: the voucher throttle's count, shared by every worker and instance

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 10:40:00.000000

One row per counted attempt (its key and time); rows older than the window are deleted as the
limiter goes. Nothing else refers to the table, so dropping it only restarts the counts.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'rate_limit_hits',
        sa.Column('key', sa.String(length=255), nullable=False),
        sa.Column('hit_at', sa.Float(), nullable=False),
    )
    op.create_index('rate_limit_hits_key_time', 'rate_limit_hits', ['key', 'hit_at'])


def downgrade():
    op.drop_index('rate_limit_hits_key_time', table_name='rate_limit_hits')
    op.drop_table('rate_limit_hits')
