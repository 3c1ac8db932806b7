"""manage.py create_api_token USERNAME [--days N]: a token for the API, printed once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from knox.models import AuthToken

MAX_DAYS = 365


def days(value: str) -> int:
    number = int(value)
    if not 1 <= number <= MAX_DAYS:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Create an API token for a user and print it (the only time it is shown: just a hash is "
        "stored). Send it as 'Authorization: Token <token>'. It expires after --days days."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", metavar="USERNAME")
        default = settings.REST_KNOX["TOKEN_TTL"].days
        parser.add_argument(
            "--days",
            type=days,
            default=default,
            metavar="N",
            help=f"days until the token expires, 1 to {MAX_DAYS} (default {default}, "
            "DRADASH_API_TOKEN_DAYS)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: options["username"]})
        except User.DoesNotExist:
            raise CommandError(f"no user named {options['username']!r}") from None
        if not user.is_active:
            raise CommandError(f"user {options['username']!r} is inactive")
        instance, token = AuthToken.objects.create(user, expiry=timedelta(days=options["days"]))
        self.stderr.write(
            f"API token for {options['username']}, expires {instance.expiry:%Y-%m-%d %H:%M} UTC "
            "(shown only now; revoke with manage.py revoke_api_tokens):"
        )
        self.stdout.write(token)
