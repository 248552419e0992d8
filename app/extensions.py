"""Extensions, created unbound so that the factory can bind them to each app."""

from __future__ import annotations

from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy

from app.models_base import Base

db = SQLAlchemy(model_class=Base)
migrate = Migrate()
