"""a CSV upload of credentials is a record its background job issues from

Revision ID: 0022_credential_uploads
Revises: 0021
Create Date: 2026-11-28 06:50:00.000000

"""

from alembic import op
import sqlalchemy as sa


# revision identifiers, used by Alembic.
revision = "0022_credential_uploads"
down_revision = "0021"
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        "credential_uploads",
        sa.Column("id", sa.Uuid(), nullable=False),
        sa.Column("organization_id", sa.Uuid(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("uploaded_by_type", sa.String(length=20), nullable=False),
        sa.Column("uploaded_by_id", sa.String(length=64), nullable=False),
        sa.Column("uploaded_by", sa.String(length=320), nullable=False),
        sa.Column("client_ip", sa.String(length=64), nullable=True),
        sa.Column("file_name", sa.String(length=255), nullable=False),
        sa.Column("file_sha256", sa.String(length=64), nullable=False),
        sa.Column("base_url", sa.Text(), nullable=False),
        sa.Column(
            "status",
            sa.Enum(
                "QUEUED",
                "RUNNING",
                "FINISHED",
                name="upload_status",
                native_enum=False,
                length=20,
            ),
            nullable=False,
        ),
        sa.Column("rows_total", sa.Integer(), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("rows_issued", sa.Integer(), nullable=False),
        sa.Column("rows_failed", sa.Integer(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("leased_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("stopped", sa.Text(), nullable=True),
        sa.Column("sealed_rows", sa.LargeBinary(), nullable=True),
        sa.Column("sealed_results", sa.LargeBinary(), nullable=True),
        sa.ForeignKeyConstraint(
            ["organization_id"],
            ["organizations.id"],
            name=op.f("fk_credential_uploads_organization_id_organizations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_credential_uploads")),
    )
    op.create_index(
        "ix_credential_uploads_organization_id_file_sha256",
        "credential_uploads",
        ["organization_id", "file_sha256"],
    )
    op.create_index("ix_credential_uploads_status", "credential_uploads", ["status"])


def downgrade():
    op.drop_index("ix_credential_uploads_status", table_name="credential_uploads")
    op.drop_index(
        "ix_credential_uploads_organization_id_file_sha256", table_name="credential_uploads"
    )
    op.drop_table("credential_uploads")
