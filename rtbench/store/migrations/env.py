"""Alembic environment: runs on the connection Store.open() hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from rtbench.store.schema import metadata

target_metadata = metadata


def run_online() -> None:
    """Migrate over the given connection, or a new one from the URL."""
    connection = context.config.attributes.get("connection")
    if connection is not None:
        context.configure(connection=connection,
                          target_metadata=target_metadata,
                          render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    engine = create_engine(context.config.get_main_option("sqlalchemy.url")
                           or "")
    with engine.begin() as conn:
        context.configure(connection=conn, target_metadata=target_metadata,
                          render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


def run_offline() -> None:
    """Emit the SQL of the migrations instead of running it."""
    context.configure(url=context.config.get_main_option("sqlalchemy.url"),
                      target_metadata=target_metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_offline()
else:
    run_online()
