"""every organization's events in its log, numbered per organization; open event streams

Revision ID: 0027_c_event_streams
Revises: 0027_b_zk
Create Date: 2026-12-02 00:30:00.000000

"""

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision = "0027_c_event_streams"
down_revision = "0027_b_zk"
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table("webhook_events") as batch:
        batch.add_column(sa.Column("position", sa.BigInteger(), nullable=True))
        batch.add_column(sa.Column("verification_id", sa.Uuid(), nullable=True))
    # The events already in the log get positions in the order they were written, and the
    # verification of their subject (a test delivery gets neither: it is in no stream).
    op.execute(
        """
        UPDATE webhook_events SET position = numbered.position
        FROM (
            SELECT sequence, ROW_NUMBER() OVER (
                PARTITION BY organization_id ORDER BY sequence
            ) AS position
            FROM webhook_events WHERE type != 'webhook.test'
        ) AS numbered
        WHERE webhook_events.sequence = numbered.sequence
        """
    )
    for kind, table in (("individual", "individuals"), ("policy_request", "policy_requests")):
        op.execute(
            f"""
            UPDATE webhook_events SET verification_id = (
                SELECT verification_id FROM {table} WHERE {table}.id = webhook_events.subject_id
            )
            WHERE type LIKE '{kind}.%'
            """
        )
    with op.batch_alter_table("webhook_events") as batch:
        batch.create_index(
            "uq_webhook_events_organization_id_position",
            ["organization_id", "position"],
            unique=True,
        )
    op.create_table(
        "event_counters",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_event_counters_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("organization_id", name=op.f("pk_event_counters")),
    )
    op.execute(
        """
        INSERT INTO event_counters (organization_id, last_position)
        SELECT organization_id, MAX(position) FROM webhook_events
        WHERE position IS NOT NULL GROUP BY organization_id
        """
    )
    op.create_table(
        "event_streams",
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("opened_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_event_streams_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_streams")),
    )
    with op.batch_alter_table("event_streams") as batch:
        batch.create_index(
            "ix_event_streams_organization_id_lease_until",
            ["organization_id", "lease_until"],
            unique=False,
        )


def downgrade():
    with op.batch_alter_table("event_streams") as batch:
        batch.drop_index("ix_event_streams_organization_id_lease_until")
    op.drop_table("event_streams")
    op.drop_table("event_counters")
    with op.batch_alter_table("webhook_events") as batch:
        batch.drop_index("uq_webhook_events_organization_id_position")
        batch.drop_column("verification_id")
        batch.drop_column("position")
