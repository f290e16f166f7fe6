"""Validates realtime server events against the official openai SDK's pydantic models.

Usage: python validate_server_events.py --dialect ga|beta FILE

FILE holds one JSON event per line. Each line must validate (strict mode) as the SDK's
`RealtimeServerEvent` union of the dialect (GA `openai.types.realtime`, beta
`openai.types.beta.realtime`): the `type` must be one of the union's own types, the event must
validate strictly as that type's model (every required field present, every value of the right
type and literal), and no object may carry a field its model does not declare, except the few
the real server sends beyond the SDK (ALLOWED_EXTRAS).
Lines whose type starts with `parley.` are Parley's own events and are skipped.

Prints one line per problem and a summary `validated N events (dialect D, skipped S)`; exits 0
only when every line validated.
"""

import argparse
import json
import sys
import typing

from pydantic import BaseModel, ValidationError

# Fields the real server's session object has beyond the SDK's session request models.
ALLOWED_EXTRAS = {
    "RealtimeSessionCreateRequest": {"id", "object", "expires_at"},
    "Session": {"object", "expires_at"},
}


def union_members(union_alias):
    """The model classes of an `Annotated[Union[...], ...]` event union, keyed by type literal."""
    union = typing.get_args(union_alias)[0]
    members = {}
    for model in typing.get_args(union):
        literal = typing.get_args(model.model_fields["type"].annotation)[0]
        members[literal] = model
    return members


def load_union(dialect):
    if dialect == "ga":
        from openai.types.realtime import RealtimeServerEvent
    else:
        from openai.types.beta.realtime import RealtimeServerEvent
    return RealtimeServerEvent


def undeclared_fields(value, path):
    """Paths of members no model declares, walking a validated model tree."""
    problems = []
    if isinstance(value, BaseModel):
        extras = set((value.model_extra or {}).keys()) - ALLOWED_EXTRAS.get(type(value).__name__, set())
        for name in sorted(extras):
            problems.append(f"{path}.{name} is not a field of {type(value).__name__}")
        for name in type(value).model_fields:
            problems.extend(undeclared_fields(getattr(value, name), f"{path}.{name}"))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            problems.extend(undeclared_fields(element, f"{path}[{index}]"))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialect", choices=["ga", "beta"], required=True)
    parser.add_argument("file")
    arguments = parser.parse_args()

    union = load_union(arguments.dialect)
    members = union_members(union)
    validated = skipped = 0
    failures = []
    with open(arguments.file, encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError as error:
                failures.append(f"line {number}: not JSON: {error}")
                continue
            event_type = event.get("type") if isinstance(event, dict) else None
            if isinstance(event_type, str) and event_type.startswith("parley."):
                skipped += 1
                continue
            if event_type not in members:
                failures.append(f"line {number}: type {event_type!r} is not a {arguments.dialect} server event")
                continue
            try:
                model = members[event_type].model_validate_json(line, strict=True)
            except ValidationError as error:
                failures.append(f"line {number} ({event_type}): {error}")
                continue
            problems = undeclared_fields(model, event_type)
            if problems:
                failures.extend(f"line {number}: {problem}" for problem in problems)
                continue
            validated += 1
    for failure in failures:
        print(failure)
    print(f"validated {validated} events (dialect {arguments.dialect}, skipped {skipped})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
