# dradash: one image for web (gunicorn), worker and beat. See docker-compose.yml.
FROM python:3.11-slim

# PYTHONPATH: run the code in /app, because templates/ and static/ live beside the dradash
# package, not inside it (settings find them relative to the source tree).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app \
    DJANGO_SETTINGS_MODULE=dradash.settings

RUN useradd --create-home --uid 10001 dradash
WORKDIR /app

# The project and its pinned runtime dependencies (no dev extras).
COPY . .
RUN pip install . \
    && mkdir -p /app/staticfiles \
    && chown dradash:dradash /app/staticfiles

USER dradash
EXPOSE 8000
# gunicorn.conf.py: bind 0.0.0.0:8000, WEB_CONCURRENCY workers (3), the access log on stdout with
# share tokens masked, the web database timeouts.
CMD ["gunicorn", "-c", "gunicorn.conf.py", "dradash.wsgi"]
