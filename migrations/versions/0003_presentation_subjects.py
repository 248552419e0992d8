"""presentation subjects: a request has exactly one subject; an attempt reaches it by its request

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-23 09:50:00.000000

Individuals and policy requests are both subjects of presentation requests. A presentation
request now names exactly one of them (a check constraint), and an attempt no longer repeats
its request's subject: it reaches it through ``request_id``.

Existing rows: a request with no subject could never be answered or shown and is removed with
its attempts; one naming both (never written by the service) keeps its individual. Going down
fills the attempts' subject columns again from their requests.
"""
from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None

ONE_SUBJECT = "(individual_id IS NULL) <> (policy_request_id IS NULL)"


def upgrade():
    op.execute(
        "DELETE FROM presentation_attempts WHERE request_id IN (SELECT id FROM"
        " presentation_requests WHERE individual_id IS NULL AND policy_request_id IS NULL)"
    )
    op.execute(
        "DELETE FROM presentation_requests"
        " WHERE individual_id IS NULL AND policy_request_id IS NULL"
    )
    op.execute(
        "UPDATE presentation_requests SET policy_request_id = NULL"
        " WHERE individual_id IS NOT NULL AND policy_request_id IS NOT NULL"
    )
    with op.batch_alter_table('presentation_requests', schema=None) as batch_op:
        batch_op.create_check_constraint(op.f('ck_presentation_requests_one_subject'), ONE_SUBJECT)

    with op.batch_alter_table('presentation_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_presentation_attempts_individual_id'))
        batch_op.drop_index(batch_op.f('ix_presentation_attempts_policy_request_id'))
        batch_op.drop_constraint(
            batch_op.f('fk_presentation_attempts_individual_id_individuals'), type_='foreignkey'
        )
        batch_op.drop_constraint(
            batch_op.f('fk_presentation_attempts_policy_request_id_policy_requests'),
            type_='foreignkey',
        )
        batch_op.drop_column('policy_request_id')
        batch_op.drop_column('individual_id')


def downgrade():
    with op.batch_alter_table('presentation_attempts', schema=None) as batch_op:
        batch_op.add_column(sa.Column('individual_id', sa.Uuid(), nullable=True))
        batch_op.add_column(sa.Column('policy_request_id', sa.Uuid(), nullable=True))
        batch_op.create_foreign_key(
            batch_op.f('fk_presentation_attempts_individual_id_individuals'),
            'individuals', ['individual_id'], ['id'], ondelete='CASCADE',
        )
        batch_op.create_foreign_key(
            batch_op.f('fk_presentation_attempts_policy_request_id_policy_requests'),
            'policy_requests', ['policy_request_id'], ['id'], ondelete='CASCADE',
        )
        batch_op.create_index(
            batch_op.f('ix_presentation_attempts_policy_request_id'), ['policy_request_id'],
            unique=False,
        )
        batch_op.create_index(
            batch_op.f('ix_presentation_attempts_individual_id'), ['individual_id'], unique=False
        )
    for column in ('individual_id', 'policy_request_id'):
        op.execute(
            f"UPDATE presentation_attempts SET {column} = (SELECT r.{column} FROM"
            " presentation_requests r WHERE r.id = presentation_attempts.request_id)"
        )

    with op.batch_alter_table('presentation_requests', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_presentation_requests_one_subject'), type_='check')
