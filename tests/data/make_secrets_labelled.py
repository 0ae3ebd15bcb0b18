"""Writes secrets_labelled.jsonl: chat messages that carry a credential (with its kind) and
hard negatives that only look like one. Every secret is random with the right shape (never a
real one); the seed makes the file reproducible. Run: python tests/data/make_secrets_labelled.py
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable
from pathlib import Path

OUT = Path(__file__).with_name("secrets_labelled.jsonl")
UP, LOW, DIG = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UP + LOW + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"


def draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def b64url(data: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def jwt(rng: random.Random) -> str:
    head = b64url({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"})
    body = b64url(
        {"sub": draw(rng, DIG, 8), "name": "dev", "iat": 1700000000 + rng.randrange(9**6)}
    )
    return f"{head}.{body}.{draw(rng, URLSAFE, 43)}"


def pem(rng: random.Random, label: str, lines: int = 4) -> str:
    body = "\n".join(draw(rng, B64, 64) for _ in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


WORDS = (
    "swordfish letmein dragon sunshine monkey biscuit falcon orchid tangerine harbour "
    "lantern pebble walrus nimbus juniper cobalt meadow quartz saffron tundra velvet "
    "hunter summer winter marble puffin"
).split()
DEFAULTS = ["changeme", "admin", "password123", "toor", "welcome1", "qwerty123", "letmein"]


def password(rng: random.Random) -> str:
    """A password as people choose them: a word with digits, a plain dictionary word, a
    passphrase, a known default, or random characters (not always digits)."""
    style = rng.choice(["word+digits", "word", "Word", "phrase", "default", "random"])
    if style == "word+digits":
        word = rng.choice(WORDS).capitalize() if rng.random() < 0.5 else rng.choice(WORDS)
        return word + draw(rng, DIG, rng.randrange(2, 5)) + rng.choice(["", "!", "#", "$"])
    if style in {"word", "Word"}:
        word = rng.choice(WORDS)
        return word.capitalize() if style == "Word" else word
    if style == "phrase":
        return rng.choice(["", "-", "."]).join(rng.sample(WORDS, rng.randrange(3, 5)))
    if style == "default":
        return rng.choice(DEFAULTS)
    return draw(rng, ALNUM + "!#$%&*+?@", rng.randrange(10, 17))


def opaque(rng: random.Random, n: int = 40) -> str:
    """A random token with letters and digits (retried until it has both)."""
    while True:
        token = draw(rng, ALNUM, n)
        if any(c.isdigit() for c in token) and any(c.isalpha() for c in token):
            return token


def card(rng: random.Random) -> str:
    """A card number passing the Luhn check, in groups of four or run together."""
    body = [int(rng.choice("3456"))] + [rng.randrange(10) for _ in range(14)]
    total = sum(d if i % 2 else (d * 2 - 9 if d > 4 else d * 2) for i, d in enumerate(body[::-1]))
    number = "".join(map(str, body)) + str(-total % 10)
    return " ".join(number[i : i + 4] for i in range(0, 16, 4)) if rng.random() < 0.5 else number


SECRETS: dict[str, Callable[[random.Random], str]] = {
    "aws-access-key": lambda r: r.choice(["AKIA", "ASIA"]) + draw(r, UP + DIG, 16),
    "aws-secret-key": lambda r: draw(r, B64, 40),
    "github-token": lambda r: r.choice(
        [
            f"ghp_{draw(r, ALNUM, 36)}",
            f"gho_{draw(r, ALNUM, 36)}",
            f"github_pat_11{draw(r, UP + DIG, 20)}_{draw(r, ALNUM, 59)}",
        ]
    ),
    "gitlab-token": lambda r: f"glpat-{draw(r, URLSAFE, 20)}",
    "slack-token": lambda r: (
        f"{r.choice(['xoxb', 'xoxp'])}-{draw(r, DIG, 11)}-{draw(r, DIG, 12)}-{draw(r, ALNUM, 24)}"
    ),
    "slack-webhook": lambda r: (
        "https://hooks.slack.com/services/T"
        f"{draw(r, UP + DIG, 8)}/B{draw(r, UP + DIG, 10)}/{draw(r, ALNUM, 24)}"
    ),
    "openai-key": lambda r: r.choice([f"sk-proj-{opaque(r, 48)}", f"sk-{opaque(r, 48)}"]),
    "anthropic-key": lambda r: f"sk-ant-api03-{draw(r, URLSAFE, 93)}AA",
    "google-api-key": lambda r: f"AIza{draw(r, URLSAFE, 35)}",
    "stripe-key": lambda r: f"{r.choice(['sk_live_', 'rk_live_', 'sk_test_'])}{opaque(r, 24)}",
    "sendgrid-key": lambda r: f"SG.{draw(r, URLSAFE, 22)}.{draw(r, URLSAFE, 43)}",
    "twilio-key": lambda r: f"SK{draw(r, HEX, 32)}",
    "npm-token": lambda r: f"npm_{opaque(r, 36)}",
    "pypi-token": lambda r: f"pypi-AgEIcHlwaS5vcmc{draw(r, URLSAFE, 80)}",
    "huggingface-token": lambda r: f"hf_{draw(r, UP + LOW, 34)}",
    "telegram-token": lambda r: f"{draw(r, DIG, 10)}:AA{draw(r, URLSAFE, 33)}",
    "azure-storage-key": lambda r: draw(r, B64, 86) + "==",
    "jwt": jwt,
    "private-key": lambda r: pem(
        r, r.choice(["RSA PRIVATE KEY", "OPENSSH PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY"])
    ),
    "connection-string": password,
    "password-assignment": password,
    "token-assignment": lambda r: r.choice(
        [draw(r, HEX, 32), str(uuid.UUID(int=r.getrandbits(128))), opaque(r, 32)]
    ),
    "bearer-token": lambda r: opaque(r, r.choice([32, 40, 64])),
    "basic-auth": password,
    "access-code": lambda r: draw(r, DIG, r.choice([4, 4, 6])),
    "random-token": lambda r: opaque(r, r.choice([24, 32, 40])),
    "payment-card": lambda r: card(r),
    "backup-codes": lambda r: "-".join(draw(r, LOW + DIG, 4) for _ in range(r.choice([2, 3]))),
    "national-id": lambda r: f"{draw(r, DIG, 3)}-{draw(r, DIG, 2)}-{draw(r, DIG, 4)}",
    "bank-account": lambda r: f"{draw(r, DIG, 2)}-{draw(r, DIG, 2)}-{draw(r, DIG, 2)}",
    "password-shaped": lambda r: (
        draw(r, UP, 1)
        + draw(r, LOW, 5)
        + r.choice("!#$%&*")
        + draw(r, UP, 1)
        + draw(r, LOW, 3)
        + draw(r, DIG, 2)
    ),
}
# kinds added after the file was first written draw from their own seed, so that adding
# one leaves every earlier row as it was
ADDED: tuple[str, ...] = (
    "payment-card",
    "backup-codes",
    "national-id",
    "bank-account",
    "password-shaped",
)

# phrasings per kind; {s} is the secret
FORMS: dict[str, list[str]] = {
    "aws-access-key": [
        "here's my key {s}, can you check why boto fails",
        "export AWS_ACCESS_KEY_ID={s}",
        "aws_access_key_id = {s}\nregion = eu-west-1",
        "boto3.client('s3', aws_access_key_id='{s}') throws AccessDenied, why?",
        "the CI user's access key is {s} fyi",
        "[default]\naws_access_key_id={s}",
    ],
    "aws-secret-key": [
        "export AWS_SECRET_ACCESS_KEY={s}",
        "aws_secret_access_key = {s}",
        'AWS_SECRET_ACCESS_KEY: "{s}" is what I put in the workflow',
        "my aws secret key is {s}, is that the wrong format?",
    ],
    "github-token": [
        "export GITHUB_TOKEN={s}",
        "use my token {s} for the api calls",
        "git clone https://{s}@github.com/acme/infra.git fails with 403",
        "gh auth login --with-token <<< {s}",
        "gh token: {s} (dont commit it)",
    ],
    "gitlab-token": [
        "CI_JOB fails, I set GITLAB_TOKEN={s} in the variables",
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.example.com/api/v4/projects",
        "my gitlab PAT is {s}",
    ],
    "slack-token": [
        "slack bot token is {s}",
        "SLACK_BOT_TOKEN={s} in .env, why does chat.postMessage say not_authed?",
        "const web = new WebClient('{s}');",
        "the alerts bot uses {s} fyi",
    ],
    "slack-webhook": [
        "our alert webhook is {s}",
        'curl -X POST -d \'{{"text":"hi"}}\' {s}',
        "SLACK_WEBHOOK_URL={s}",
    ],
    "openai-key": [
        "export OPENAI_API_KEY={s}",
        'client = OpenAI(api_key="{s}") gives 401, why',
        "my openai key {s} stopped working today",
        "OPENAI_API_KEY: {s}",
    ],
    "anthropic-key": [
        "ANTHROPIC_API_KEY={s}",
        "here is the anthropic key for the eval box {s}",
        "anthropic.Anthropic(api_key='{s}')",
    ],
    "google-api-key": [
        "maps api key is {s}, the quota looks off",
        '<script src="https://maps.googleapis.com/maps/api/js?key={s}"></script>',
        "GOOGLE_API_KEY={s}",
    ],
    "stripe-key": [
        "STRIPE_SECRET_KEY={s}",
        'stripe.api_key = "{s}"',
        "the stripe key on prod is {s}, webhooks fail",
    ],
    "sendgrid-key": ["SENDGRID_API_KEY={s}", "sendgrid key: {s}", "sg = SendGridAPIClient('{s}')"],
    "twilio-key": ["twilio api key sid {s} with the secret in vault", "TWILIO_API_KEY={s}"],
    "npm-token": [
        "//registry.npmjs.org/:_authToken={s}",
        "NPM_TOKEN={s} for the publish job",
        "npm token is {s}",
    ],
    "pypi-token": ["twine upload -u __token__ -p {s} dist/*", "PYPI_TOKEN={s}"],
    "huggingface-token": ["HF_TOKEN={s}", "huggingface-cli login --token {s}"],
    "telegram-token": ["bot = telebot.TeleBot('{s}')", "TELEGRAM_BOT_TOKEN={s}"],
    "azure-storage-key": [
        "DefaultEndpointsProtocol=https;AccountName=acmelogs;AccountKey={s};"
        "EndpointSuffix=core.windows.net",
        "AZURE_STORAGE_KEY={s}",
    ],
    "jwt": [
        "here's the jwt from the login response {s}",
        "curl -H 'Authorization: Bearer {s}' https://api.acme.dev/v1/me",
        "decoded this token {s} and the exp looks wrong",
        "localStorage.setItem('token', '{s}')",
        '{{"access_token": "{s}", "expires_in": 3600}}',
    ],
    "private-key": [
        "here's the deploy key:\n{s}",
        "why does ssh say invalid format for this key?\n{s}\nthanks",
        "{s}",
        "key file contents below\n\n{s}\n\nit is the one on the bastion",
    ],
    "connection-string": [
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/app",
        "psql postgresql://admin:{s}@10.0.3.12:5432/analytics -c 'select 1' hangs",
        "mongodb+srv://svc-orders:{s}@cluster0.ab12c.mongodb.net/orders?retryWrites=true",
        "REDIS_URL=redis://:{s}@cache.internal:6379/0",
        "engine = create_engine('mysql+pymysql://root:{s}@localhost/shop')",
        "amqp://worker:{s}@rabbit.prod:5672/ is the broker url",
    ],
    "password-assignment": [
        "DB_PASSWORD={s}",
        "the db pw is {s} dont share",
        "root password for the bastion is {s}",
        "my password is {s} and it still says invalid login",
        '{{"username": "admin", "password": "{s}"}}',
        "spring.datasource.password: {s}",
        "POSTGRES_PASSWORD: {s}",
        "creds: admin / password {s}",
        "docker run -e MYSQL_ROOT_PASSWORD={s} mysql:8",
        "the pw for the staging grafana is {s}",
        "username frourke and password {s}",
        "export PGPASSWORD={s} && psql -h db -U app",
    ],
    "token-assignment": [
        "API_KEY={s}",
        "the openweather api key is {s}",
        "client_secret: {s}",
        "x-api-key: {s}",
        "SECRET_KEY = '{s}'",
        "my api token is {s}, requests keep getting 401",
        "access_token={s}&expires_in=3600",
        "const apiKey = '{s}';",
    ],
    "bearer-token": [
        'curl -H "Authorization: Bearer {s}" https://api.acme.dev/v2/orders',
        "Authorization: Bearer {s}",
        "headers = {{'Authorization': 'Bearer {s}'}}",
    ],
    "basic-auth": [
        "curl -u admin:{s} https://jenkins.internal/api/json",
        "Authorization: Basic {b}",
        "wget --user deploy --password {s} https://files.internal/x.tgz",
    ],
    "access-code": [
        "the door code is {s}# should you need it",
        "fuel card pin {s} for the new guy",
        "alarm code: {s}",
        "my bank card PIN is {s}",
        "gate code for the warehouse is {s}",
        "backup codes: {s}-{s}",
        "also the farm wifi is honeyb33s!{s} in case",
        "wifi password: Blue-Heron-{s}",
    ],
    "random-token": [
        "here's the key: {s}",
        "the token I got back was {s}, is it valid?",
        "paste this into the admin panel: {s}",
        "signing with {s} now",
    ],
    "payment-card": [
        "my card number is {s}, expiry 09/28",
        "charge it to {s} please",
        "the visa {s} got declined at checkout",
        "Card: {s}",
    ],
    "backup-codes": [
        "github gave me 2fa recovery codes, {s} and {s}",
        "backup code {s} in case I lose the phone",
        "MFA codes: {s}, {s}",
        "here are the recovery codes {s} / {s}",
    ],
    "national-id": [
        "applicant's SSN {s}, employer on the form",
        "her social security number is {s}",
        "SSN: {s} (don't lose this)",
        "the form wants my social security no. {s} again",
    ],
    "bank-account": [
        "his bank sent sort code {s} by mistake",
        "sort code {s}, account in the name of the school",
        "pay the deposit to sort code {s}",
        "Sort code: {s}",
    ],
    "password-shaped": [
        "the laptop won't take {s} even though I know it's right",
        "IT reset it to {s} for now",
        "new one: {s}",
        "tried {s} twice and it locked me out",
    ],
}

# written after the rules were tuned on the forms above, and run once: the honest figure
HELD_OUT: dict[str, list[str]] = {
    "aws-access-key": [
        "I rotated it, the new id is {s} and the old one is disabled",
        "Credentials for the ci-bot user: {s} (access key id)",
    ],
    "aws-secret-key": ["[prod]\naws_secret_access_key={s}\naws_session_token=..."],
    "github-token": [
        "token in the actions secret was {s}, still 401 on checkout",
        "remote: https://x-access-token:{s}@github.com/acme/web",
    ],
    "slack-token": ["ok so SLACK_TOKEN is {s} and scopes are chat:write"],
    "openai-key": ["openai.api_key = '{s}'  # TODO move to env"],
    "stripe-key": ["Stripe::setApiKey('{s}');"],
    "jwt": ["the cookie session={s}; Path=/; HttpOnly"],
    "private-key": ["cat ~/.ssh/id_ed25519 gives\n{s}\nis the permission 600 enough?"],
    "connection-string": [
        "jdbc url postgresql://reporting:{s}@warehouse.internal/reports works in dbeaver only",
        "CELERY_BROKER_URL = 'redis://default:{s}@redis-12345.c1.cloud.redislabs.com:12345'",
    ],
    "password-assignment": [
        "set the admin password to {s} for now, I'll change it later",
        "mysql -u root -p{s} -e 'show databases'",
        "the vpn password is {s}",
        "<password>{s}</password> in settings.xml",
        "pass: {s}",
    ],
    "token-assignment": [
        "OPENWEATHER_KEY={s}",
        "header X-Auth-Token: {s}",
        "my datadog api key {s}",
    ],
    "bearer-token": ["requests.get(url, headers={{'Authorization': f'Bearer {s}'}})"],
    "basic-auth": ["git clone https://deploy:{s}@git.internal/acme/app.git"],
    "access-code": ["safe code is {s}", "the lockbox at the cabin opens with {s}"],
    "random-token": ["that's the one: {s}", "{s}"],
}

NEGATIVES: list[str] = [
    "the password is in 1Password",
    "the password is stored in the vault under prod/db",
    "rotate the API key before friday",
    "we need to rotate the stripe key after the incident",
    "the token expired again, I'll ask for a new one",
    "the API key lives in the env var OPENWEATHER_API_KEY",
    "password rotation is every 90 days",
    "the pass rate is 95% on the nightly run",
    "the wifi is down again",
    "pin the dependency to 2.4.1",
    "the door code changed yesterday, ask Sam",
    "my PIN is the usual one",
    "I forgot my password and had to reset it",
    "use a password manager, never share the password in chat",
    "the secret is to let the dough rest overnight",
    "key takeaways: ship smaller PRs",
    "the login page is /auth/login",
    "arn:aws:iam::123456789012:role/deploy-role is the role the runner assumes",
    "the bucket is s3://acme-logs-eu/2024/03/",
    "aws account id 123456789012, region eu-west-1",
    "connect to db-prod-1.eu-west-1.rds.amazonaws.com on 5432",
    "postgres://user:password@localhost:5432/mydb is the example in the docs",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "export GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}",
    "GITHUB_TOKEN = os.environ['GITHUB_TOKEN']",
    "const apiKey = process.env.OPENWEATHER_API_KEY;",
    "const API_KEY = 'YOUR_API_KEY_HERE';",
    "password = request.form['password']",
    "password: ********",
    "API_KEY=<your-api-key>",
    "Authorization: Bearer <token>",
    'curl -H "Authorization: Bearer $TOKEN" https://api.acme.dev/v1/me',
    "the key starts with AKIA, those are long-term keys",
    "ghp_ tokens are classic personal access tokens",
    "the stripe key looks like sk_live_... but I won't paste it",
    "my key ends in ...4f2a",
    "commit 3f2a9c1b is the last good build",
    "git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "cherry-pick e83c5163316f89bfbde7d9ab23ca2e25604af290 onto release",
    "sha256sum: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "image digest sha256:4bc453b53cb3d914b45f4b250294236adba2c0e09ff6f03793949e7e39fd4cc1",
    'integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"',
    '"integrity": "sha512-Vq3GZq4p8d1Sdl7qB8uJcfz6Jrq9Qw3t9ZmYVvW2QK+eG5eFhN0aHt7oPpXz3f0qLh'
    'cY1S2mN9bR4tA6uJw8Qg=="',
    "md5 of the tarball is 9e107d9d372bb6826bd81d3542a419d6",
    "request id 550e8400-e29b-41d4-a716-446655440000 failed at 10:32",
    "the tenant id is 7c9e6679-7425-40de-944b-e07fc1f90ae7",
    "build 20240315.4-a8f9c2e passed, artefact build-8842-1b9e7f3",
    "pod api-7d9f8b6c4-x2x9z keeps restarting",
    "upgraded to Django 5.0.3 and Python 3.12.2",
    "node v20.11.1, npm 10.2.4, pnpm 8.15.4",
    "the release tag is v2.14.0-rc.3+build.5678",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop",
    "add this to authorized_keys: ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7Vq3pG8mYkz2Xh9cRt5"
    "uLQwEa0sWv4n6Jb1Dx deploy@ci",
    "-----BEGIN CERTIFICATE-----\n"
    "MIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBaMQswCQYDVQQGEwJJ\n"
    "RTESMBAGA1UEChMJQmFsdGltb3JlMRMwEQYDVQQLEwpDeWJlclRydXN0MSIwIAYD\n"
    "-----END CERTIFICATE-----\nis the CA cert, is it expired?",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEEVs/o5+uQbTjL3chynL4wXgUg2R9\n"
    "q9UU8I5mEovUf86QZ7kOBIjJwqnzD1omageEHWwHdBO6B+dFabmdT9POxg==\n-----END PUBLIC KEY-----",
    '<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42m'
    'NkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">',
    "the favicon is iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAYAAAAf8/9hAAAAGklEQVR4nGNgGAWjYBSMglEwCk",
    "watch https://www.youtube.com/watch?v=dQw4w9WgXcQ for the demo",
    "the spec is at https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "see https://github.com/acme/infra/pull/4821#discussion_r1532298761",
    "logs at https://console.aws.amazon.com/cloudwatch/home?region=eu-west-1#logsV2:log-groups",
    "the UPS tracking number is 1Z999AA10123456784",
    "order #A1B2-C3D4-E5F6 shipped on monday",
    "call me at +44 20 7946 0958 or mail ops@acme.dev",
    "server at 192.168.10.24, gateway 10.0.0.1",
    "class UserProfileComponentTest extends TestCase {}",
    "getElementsByClassName returns a live HTMLCollection",
    "the function is handleAuthenticationCallbackError in AuthProvider.tsx",
    "I set max_connections = 200 and shared_buffers = 4GB",
    "timeout: 30s, retries: 3, backoff: exponential",
    "token budget is 4096 per request",
    "the key is to keep the cache warm",
    "secret santa is on the 20th",
    "use the key from the lockbox at the front desk",
    "token: ${{ secrets.NPM_TOKEN }}",
    "password_hash = generate_password_hash(password)",
    "if (password.length < 12) throw new Error('too short')",
    "set PGPASSWORD in your shell, not in the script",
    "the access code for the conference is on the invite",
    "our wifi network is AcmeGuest",
    "jwt tokens expire after 15 minutes, refresh tokens after 7 days",
    "the aws secret key is in ~/.aws/credentials",
    "store the token in the keychain, not in localStorage",
    "bearer tokens go in the Authorization header",
    "basic auth is disabled on the new gateway",
    "I'm using PostgreSQL 15 on port 5432 with pgbouncer",
    "the IBAN for the invoice is DE89 3704 0044 0532 0130 00",
    "ticket OPS-4821 covers the rotation",
    "Stripe test card 4242 4242 4242 4242 works in the sandbox",
    "mongodb://localhost:27017/test is fine for dev",
    "redis://cache.internal:6379/0 is the cache",
    "the API endpoint is api.openweathermap.org/data/2.5/weather?q=London&units=metric",
    "npm install react@18.2.0 react-dom@18.2.0",
    "pip install 'requests>=2.31,<3'",
    "Kubernetes secret name is db-credentials in namespace payments",
    "kubectl create secret generic db-creds --from-env-file=.env.prod",
    "the passkey rollout starts next sprint",
    "the password policy needs 12 chars with a symbol",
    "the PIN pad at the entrance is broken",
    "LOG_LEVEL=debug\nPORT=8080\nNODE_ENV=production",
    "DB_HOST=db.internal\nDB_PORT=5432\nDB_NAME=app\nDB_USER=app",
    "AWS_REGION=eu-west-1\nAWS_PROFILE=staging",
    "the cache key is user:{id}:profile",
    "primary key is (tenant_id, order_id)",
    "the token bucket refills at 10 requests per second",
    "hash of the release: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
    "my GPG key id is 3AA5C34371567BD2",
    "the blob id is QmXoypizjW3WknFiJnKLwHCnL72vedxjQkDDP1mXWo6uco on IPFS",
    "send it to bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq",
    "Ethereum address 0x71C7656EC7ab88b098defB751B7401B5f6d8976F",
    "the session id cookie looks like s%3Aabc.def",
    "VITE_APP_TITLE=Acme Portal",
    "my username is frourke and my password is the same as last year",
    "the wifi password is on the fridge",
    "password reset link: https://acme.dev/reset?user=42",
    "the door code is written on the back of the badge",
    "Can you explain what an API key is and how to keep it safe?",
    "I'm Craig, building a budget tracker with Flask 2.3.2 and SQLAlchemy 2.0",
    "the vault path is secret/data/prod/payments",
    "here's the output: Successfully installed boto3-1.34.69 botocore-1.34.69",
    "the regex is ^[A-Za-z0-9+/]{40}$ for the secret format",
    "AKIAIOSFODNN7EXAMPLE is the example key from the AWS docs",
]

# issue 9's review (finding 2): credentials said in words, whatever the value's classes;
# the rules were written against these, so they are a tuned-on block, not held out
REVIEW: list[str] = [
    "We use hunter2 as the password for the staging box",
    "The jenkins admin login is admin with password correcthorsebatterystaple",
    "passwd=letmein",
    "password=letmein",
    "pass is swordfish",
    "pw for staging is correcthorsebatterystaple",
    "Login for grafana: admin / S3cr3tP@ss",
    "The wifi password is the dog's name, Biscuit2019",
    "The root password, in case you forget, is 'Zebra!Moon#77'",
    "Remember: credentials are bob and hunter2",
    "Store this: hunter2 is the password for prod",
    "mot de passe: Soleil2024",
    "the password is letmein",
    "the default password is changeme, change it on first login",
    "admin with password {s}",
    "{s} as the password for the build agent",
    "{s} is the password for prod",
    "the password is {s}",
]
REVIEW_NEGATIVES: list[str] = [
    "Reset your password at https://id.example.com/reset",
    "The build cache key is v2-deps-9f8e7d6c",
    "The password policy requires 12 characters",
    "the password is stored in SSM",
    "rotate the password",
    "the password was changed yesterday",
    "the file is password protected",
    "password: <password>",
    "DB_PASSWORD=YOUR_PASSWORD",
    "The build server is ci-runner-07.internal.example.com",
    "Short SHA 3f9a2b7 broke the build",
    "The API key rotation happens every 90 days",
    "Token limit for the model is 8192",
]

# written before the rules were run on them, and run once (first run: 13/20 caught, 0/20
# negatives flagged); the misses were then fixed by structure — see bench/secrets.py
HELD_OUT_WORDS: list[str] = [
    "ok the router admin password is {s}",
    "Password for the NAS: {s}",
    "for the staging db use {s} as the password",
    "btw my email password is {s} if you need to check the inbox",
    "The shared account: user ops, password {s}",
    "login: deploy / {s}",
    "the passphrase for the gpg key is {s}",
    "new wifi pass = {s}",
    "I changed the pw to {s} yesterday",
    "{s} — that's the password for the printer admin page",
    "grafana creds are admin and {s}",
    "the password on the jenkins box is {s}, don't tell anyone",
    "sudo password: {s}",
    "Contraseña: {s}",
    "Passwort ist {s}",
    "root / {s} gets you into the bastion, credentials for it anyway",
    'The Wi-Fi passphrase is "{s}"',
    "keystore password={s}",
    "the VPN password has been set to {s}",
    "My password for the portal is {s}.",
]
HELD_OUT_WORDS_NEGATIVES: list[str] = [
    "the password is on a sticky note under the keyboard",
    "password must contain at least one symbol",
    "the admin password is managed by Vault and rotated hourly",
    "forgot password? click the link in the email",
    "the password field is missing on the signup form",
    "he passed the exam last week",
    "a password is required to open the pdf",
    "passwords are hashed with argon2id",
    "the credentials are in the team's 1Password vault",
    "login is via SSO with Okta",
    "the password you set during install",
    "change the default password after the first boot",
    "we moved the pass through the mountains at dawn",
    "password reset emails go out from noreply@acme.dev",
    "Use a passphrase of at least 4 words",
    "the wifi password changed, ask reception",
    "the boarding pass is in my wallet",
    "credentials expire after 90 days",
    "my password is too short apparently",
    "the password was reset by IT this morning",
]

# the tenth round: what a conversation set written elsewhere stored (a card number made up,
# so failing the Luhn check, given after the card's name; a key box's code said as "the
# code" a sentence later) and the look-alikes the new rules must leave alone
TENTH: list[tuple[str, str]] = [
    (
        "I see on my banking app that my card 4921 8830 1157 2204 has been charged twice "
        "for the same stay.",
        "payment-card",
    ),
    ('the receipt shows the card like this: "Card: 4532 7781 0093 6620"', "payment-card"),
    (
        "we may send the code of the late-arrival key box by email to guests who arrive "
        "after 01:00. The code at present is 7316 and it is the same for all guests.",
        "access-code",
    ),
    ("agent says theres a key safe by the side gate, 4471.", "access-code"),
    (
        "I must also give her the combination for the storeroom padlock at the market, which "
        "is 3-9-1-7, and explain the procedure for the float.",
        "access-code",
    ),
    ("front door is a schlage encode, I made Rosa a user code, 8142.", "access-code"),
    ("The host key for our university licence is 731904", "access-code"),
    (
        "my bank app locked me out and i had to give zara my card to get cash out for me, "
        "told her the pin (6093) over text lol.",
        "access-code",
    ),
    (
        "reception keep asking me for the guest wifi password. its Kx9#mPLw2 and I'm sick of "
        "writing it on post-its.",
        "password-assignment",
    ),  # a plain lock of a place, its code ending the clause; a PIN in brackets as "it"; a
    # code ending its sentence (each stored by a set written elsewhere, fresh50)
    ("the lock on the honey house is 2719, same as the shed one", "access-code"),
    ("got a new PIN for the joint account (it's 5830) so the old one won't work", "access-code"),
    ("the lockbox on the side door is 4471.", "access-code"),
    # a keypad's code digit by digit, a token given in brackets (a blind set, 2026-12-02)
    ("the padlock on the shed is 3-8-6-2. can u help me write a note", "access-code"),
    ("Alarm code is 9-0-5-2 and you have 30 seconds after opening the door", "access-code"),
    (
        "my api secret (a1b9c7d3e5f7091b2c4d6e8f0a1b3c5d7e9f0a2b) keeps getting rejected",
        "token-assignment",
    ),
]
TENTH_NEGATIVES: list[str] = [
    "the key safe by the side gate, 2019.",
    "the lockbox arrived on Monday, 3 days late.",
    "The order number is 4921 8830 1157 2204 for the shipment.",
    "We fixed the gate last week. The code at the bottom of the report is 500 lines long.",
    "The door was repainted in May. The code is 2024 for the annual report.",
    "the door to the office has the area code 0161 on it",
    "the password manager is great, its 1Password 8 now",
    "the product key sticker is on the box from 2019",
    "the lock on the orders table is 3000 rows",
    "the lock for the migration is 5000 ms",
    "the lock on the shed is from 2019",
    "the PIN pad (it's 2019's model) broke again",
    "the lockbox on the side door is 4471.5 inches wide",
    "the gate code changed on 12-04-2023",
    "we won 3-2-1 at the gate",
    "my api key (the old one) expired yesterday",
]

# the eleventh round: what two sets of chats (written by helpers who had not read the
# rules) stored — one-time codes listed in dashed groups, a bank's memorable word, a
# password named by who gave it
ELEVENTH: list[tuple[str, str]] = [
    (
        "the bank set up 2fa and gave me recovery codes: 7g3k-q2wx-9mzt, 4jd8-w1rc-p72n",
        "backup-codes",
    ),
    ("Mailchimp sent backup codes for the mfa, 4812-0937 and 6625-1180", "backup-codes"),
    ("recovery code is 91kd-33pq-x7a2 if I ever lose my phone", "backup-codes"),
    ("The memorable word they asked for is pumpernickel, after the bakery", "password-assignment"),
    ("the wifi password they gave us is fishcake", "password-assignment"),
    ("my security answer is Biscuit, the first dog", "password-assignment"),
    ("the side gate keypad code is K2091Z now", "access-code"),
    ("the office wants a login code, T8Q4M", "access-code"),
    ("estates reset the store room keypad, it got reset to 3-1-9-4", "access-code"),
    ("Tenant form: SSN 521-60-4417, income $3,900/mo", "national-id"),
    (
        "he emailed his bank details, sort code 40-11-62 account 31926580, what now",
        "bank-account",
    ),
    ("it just won't take Marigold!Path47 which I know is right", "password-shaped"),
    ("RT4K-9PLX-2WQ7 was the second code, keep it safe", "random-token"),
]
ELEVENTH_NEGATIVES: list[str] = [
    "I printed the recovery codes for two-factor and put them in the safe",
    "backup codes abcd-efgh are the format they use in the docs",
    "the password you gave me is wrong",
    "the password they asked for is 12 characters long",
    "the memorable word is the name of my first school",
    "what a memorable word that was",
    "the recovery code step takes 5-10 minutes",
    "the error code is E404 again",
    "the code is ready now, 2 files changed",
    "the guard code was 2 minutes late",
    "the serial is PM21-004417 on the sticker",
    "SKU ABCD-1234-EFGH-5678 arrived today",
    "the account 12000000 belongs to the youth club",
    "jump to #project1Modal now and fill it in",
    "part number BRKT-00A2-1100 is on order",
    'integrity="sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC"',
    '<div id="#project1Modal"> holds the form',
    "the regex is ^[A-Za-z0-9+/]{40}$ for tokens",
]

HELD_OUT_NEGATIVES: list[str] = [
    "the staging token was revoked this morning",
    "my password manager is Bitwarden 2024.3.1",
    "SESSION_COOKIE_SECURE=True\nCSRF_COOKIE_SECURE=True",
    "the key rotation job runs at 03:00 UTC daily",
    "we store keys in AWS KMS, key alias alias/prod-payments",
    "uuid4() gives 16fd2706-8baf-433b-82eb-8c7fada847da",
    "the commit 1a410efbd13591db07496601ebc7a059dd55cfe9 added the login form",
    "Authorization header missing, got 401 Unauthorized",
    "the door code is the same as the alarm code",
    "Docker image ghcr.io/acme/api:sha-4f2a9c1",
    "my wifi keeps dropping on 5GHz",
    "pin 3 on the GPIO header is 3.3V",
    "I typed the password twice and it still failed",
    "the Jira key is OPS and the board id is 42",
    "secret manager arn arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf",
]


def _fill(rng: random.Random, kind: str, form: str) -> str:
    secret = SECRETS[kind](rng)
    if "{b}" in form:
        pair = f"deploy:{secret}".encode()
        return form.replace("{b}", base64.b64encode(pair).decode())
    return form.format(s=secret)


def added_rows() -> list[dict[str, object]]:
    """The kinds added later, from their own seed, then the tenth round's block."""
    rng = random.Random(20261201)
    rows: list[dict[str, object]] = [
        {"text": _fill(rng, kind, form), "secret": True, "kind": kind}
        for kind in ADDED
        for form in FORMS[kind]
    ]
    rows += [
        {"text": text, "secret": True, "kind": kind, "block": "tenth-round"} for text, kind in TENTH
    ]
    rows += [
        {"text": text, "secret": False, "kind": None, "block": "tenth-round"}
        for text in TENTH_NEGATIVES
    ]
    rows += [
        {"text": text, "secret": True, "kind": kind, "block": "eleventh-round"}
        for text, kind in ELEVENTH
    ]
    rows += [
        {"text": text, "secret": False, "kind": None, "block": "eleventh-round"}
        for text in ELEVENTH_NEGATIVES
    ]
    return rows


def main() -> None:
    rng = random.Random(20260312)
    rows = []
    for kind, forms in FORMS.items():
        if kind in ADDED:
            continue
        for form in forms:
            rows.append({"text": _fill(rng, kind, form), "secret": True, "kind": kind})
        if len(forms) < 4:  # every kind at least four times, with fresh secrets
            for form in rng.sample(forms * 4, 4 - len(forms)):
                rows.append({"text": _fill(rng, kind, form), "secret": True, "kind": kind})
    for kind, forms in HELD_OUT.items():
        for form in forms:
            rows.append(
                {"text": _fill(rng, kind, form), "secret": True, "kind": kind, "held_out": True}
            )
    words = "password-assignment"
    for block, forms in (("review", REVIEW), ("held-out-words", HELD_OUT_WORDS)):
        for form in forms:
            row = {"text": form.format(s=password(rng)), "secret": True, "kind": words}
            rows.append({**row, "block": block, **({"held_out": True} if "held" in block else {})})
    rows += [{"text": text, "secret": False, "kind": None} for text in NEGATIVES]
    rows += [
        {"text": text, "secret": False, "kind": None, "block": "review"}
        for text in REVIEW_NEGATIVES
    ]
    rows += [
        {"text": text, "secret": False, "kind": None, "block": "held-out-words", "held_out": True}
        for text in HELD_OUT_WORDS_NEGATIVES
    ]
    rows += [
        {"text": text, "secret": False, "kind": None, "held_out": True}
        for text in HELD_OUT_NEGATIVES
    ]
    rows += added_rows()
    with OUT.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    positives = sum(r["secret"] for r in rows)
    print(f"{len(rows)} rows ({positives} secrets, {len(rows) - positives} negatives) -> {OUT}")


if __name__ == "__main__":
    main()
