"""Prints realtime client events as the official openai SDK puts them on the wire.

Usage: python emit_client_events.py --dialect ga|beta

Each event is written as the SDK's param TypedDict (GA `openai.types.realtime`, beta
`openai.types.beta.realtime`), checked against the SDK's `RealtimeClientEvent` models, and
serialised exactly as the SDK's realtime connection does in `send()`:
`json.dumps(maybe_transform(event, <client event param union>))`. One JSON event per line on
stdout; every `event_id` names the case (`evt_<case>`) so a test can check what it decodes to.
"""

import argparse
import base64
import json
import struct
import sys
import typing

from openai._utils import maybe_transform
from pydantic import TypeAdapter

WEATHER_TOOL = {
    "type": "function",
    "name": "get_weather",
    "description": "Looks up the weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city."}},
        "required": ["city"],
    },
}

# 20 ms of a quiet 24 kHz ramp, pcm16 little-endian.
AUDIO = base64.b64encode(struct.pack("<480h", *range(-240, 240))).decode("ascii")


def ga_events():
    from openai.types.realtime import (
        ConversationItemCreateEventParam,
        ConversationItemDeleteEventParam,
        ConversationItemRetrieveEventParam,
        ConversationItemTruncateEventParam,
        InputAudioBufferAppendEventParam,
        InputAudioBufferClearEventParam,
        InputAudioBufferCommitEventParam,
        OutputAudioBufferClearEventParam,
        ResponseCancelEventParam,
        ResponseCreateEventParam,
        SessionUpdateEventParam,
    )

    events = [
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_full",
            session={
                "type": "realtime",
                "model": "gpt-realtime",
                "instructions": "Be brief.",
                "output_modalities": ["audio"],
                "audio": {
                    "input": {
                        "format": {"type": "audio/pcm", "rate": 24000},
                        "noise_reduction": {"type": "near_field"},
                        "transcription": {"model": "whisper-1", "language": "en", "prompt": "Parley"},
                        "turn_detection": {
                            "type": "server_vad",
                            "threshold": 0.6,
                            "prefix_padding_ms": 200,
                            "silence_duration_ms": 400,
                            "idle_timeout_ms": 6000,
                            "create_response": False,
                            "interrupt_response": True,
                        },
                    },
                    "output": {"format": {"type": "audio/pcm", "rate": 24000}, "voice": "marin", "speed": 1.1},
                },
                "tools": [WEATHER_TOOL],
                "tool_choice": "required",
                "max_output_tokens": 512,
                "tracing": "auto",
                "truncation": "auto",
            },
        ),
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_manual",
            session={"type": "realtime", "audio": {"input": {"turn_detection": None, "transcription": None}}},
        ),
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_semantic",
            session={
                "type": "realtime",
                "output_modalities": ["text"],
                "audio": {"input": {"turn_detection": {"type": "semantic_vad", "eagerness": "high", "create_response": True}}},
                "tool_choice": {"type": "function", "name": "get_weather"},
                "max_output_tokens": "inf",
            },
        ),
        InputAudioBufferAppendEventParam(type="input_audio_buffer.append", event_id="evt_append", audio=AUDIO),
        InputAudioBufferCommitEventParam(type="input_audio_buffer.commit", event_id="evt_commit"),
        InputAudioBufferClearEventParam(type="input_audio_buffer.clear", event_id="evt_clear"),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_user_text",
            item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What's the weather in Oslo?"}]},
        ),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_function_call_output",
            previous_item_id="item_call",
            item={"type": "function_call_output", "call_id": "call_42", "output": "{\"celsius\": 12}"},
        ),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_assistant_text",
            item={
                "id": "item_assistant",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "It is 12 degrees."}],
            },
        ),
        ConversationItemTruncateEventParam(
            type="conversation.item.truncate", event_id="evt_truncate", item_id="item_assistant", content_index=0, audio_end_ms=1500
        ),
        ConversationItemDeleteEventParam(type="conversation.item.delete", event_id="evt_delete", item_id="item_old"),
        ConversationItemRetrieveEventParam(type="conversation.item.retrieve", event_id="evt_retrieve", item_id="item_old"),
        ResponseCreateEventParam(type="response.create", event_id="evt_response_create_plain"),
        ResponseCreateEventParam(
            type="response.create",
            event_id="evt_response_create_options",
            response={
                "instructions": "Answer in French.",
                "output_modalities": ["text"],
                "conversation": "none",
                "metadata": {"topic": "weather"},
                "tools": [WEATHER_TOOL],
                "tool_choice": "auto",
                "max_output_tokens": 64,
                "audio": {"output": {"voice": "cedar"}},
            },
        ),
        ResponseCancelEventParam(type="response.cancel", event_id="evt_cancel", response_id="resp_1"),
        OutputAudioBufferClearEventParam(type="output_audio_buffer.clear", event_id="evt_output_clear"),
    ]
    from openai.types.realtime import RealtimeClientEvent, RealtimeClientEventParam
    from openai.types.realtime.response_create_event_with_references_param import ResponseCreateEventWithReferencesParam

    return events, typing.Union[RealtimeClientEventParam, ResponseCreateEventWithReferencesParam], RealtimeClientEvent


def beta_events():
    from openai.types.beta.realtime import (
        ConversationItemCreateEventParam,
        ConversationItemDeleteEventParam,
        ConversationItemRetrieveEventParam,
        ConversationItemTruncateEventParam,
        InputAudioBufferAppendEventParam,
        InputAudioBufferClearEventParam,
        InputAudioBufferCommitEventParam,
        ResponseCancelEventParam,
        ResponseCreateEventParam,
        SessionUpdateEventParam,
    )

    events = [
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_full",
            session={
                "model": "gpt-4o-realtime-preview",
                "instructions": "Be brief.",
                "modalities": ["text", "audio"],
                "voice": "verse",
                "speed": 1.1,
                "input_audio_format": "pcm16",
                "output_audio_format": "pcm16",
                "input_audio_noise_reduction": {"type": "far_field"},
                "input_audio_transcription": {"model": "whisper-1", "language": "en", "prompt": "Parley"},
                "turn_detection": {
                    "type": "server_vad",
                    "threshold": 0.6,
                    "prefix_padding_ms": 200,
                    "silence_duration_ms": 400,
                    "create_response": False,
                    "interrupt_response": True,
                },
                "tools": [WEATHER_TOOL],
                "tool_choice": "required",
                "temperature": 0.7,
                "max_response_output_tokens": 512,
            },
        ),
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_manual",
            session={"turn_detection": None, "input_audio_transcription": None},
        ),
        SessionUpdateEventParam(
            type="session.update",
            event_id="evt_session_update_semantic",
            session={
                "modalities": ["text"],
                "turn_detection": {"type": "semantic_vad", "eagerness": "high", "create_response": True},
                "tool_choice": "get_weather",
                "max_response_output_tokens": "inf",
            },
        ),
        InputAudioBufferAppendEventParam(type="input_audio_buffer.append", event_id="evt_append", audio=AUDIO),
        InputAudioBufferCommitEventParam(type="input_audio_buffer.commit", event_id="evt_commit"),
        InputAudioBufferClearEventParam(type="input_audio_buffer.clear", event_id="evt_clear"),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_user_text",
            item={"type": "message", "role": "user", "content": [{"type": "input_text", "text": "What's the weather in Oslo?"}]},
        ),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_function_call_output",
            previous_item_id="item_call",
            item={"type": "function_call_output", "call_id": "call_42", "output": "{\"celsius\": 12}"},
        ),
        ConversationItemCreateEventParam(
            type="conversation.item.create",
            event_id="evt_item_assistant_text",
            item={
                "id": "item_assistant",
                "type": "message",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "text", "text": "It is 12 degrees."}],
            },
        ),
        ConversationItemTruncateEventParam(
            type="conversation.item.truncate", event_id="evt_truncate", item_id="item_assistant", content_index=0, audio_end_ms=1500
        ),
        ConversationItemDeleteEventParam(type="conversation.item.delete", event_id="evt_delete", item_id="item_old"),
        ConversationItemRetrieveEventParam(type="conversation.item.retrieve", event_id="evt_retrieve", item_id="item_old"),
        ResponseCreateEventParam(type="response.create", event_id="evt_response_create_plain"),
        ResponseCreateEventParam(
            type="response.create",
            event_id="evt_response_create_options",
            response={
                "instructions": "Answer in French.",
                "modalities": ["text"],
                "conversation": "none",
                "metadata": {"topic": "weather"},
                "tools": [WEATHER_TOOL],
                "tool_choice": "auto",
                "max_response_output_tokens": 64,
                "voice": "cedar",
                "temperature": 0.9,
            },
        ),
        ResponseCancelEventParam(type="response.cancel", event_id="evt_cancel", response_id="resp_1"),
        {"type": "output_audio_buffer.clear", "event_id": "evt_output_clear"},
    ]
    from openai.types.beta.realtime import RealtimeClientEvent, RealtimeClientEventParam

    return events, RealtimeClientEventParam, RealtimeClientEvent


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dialect", choices=["ga", "beta"], required=True)
    arguments = parser.parse_args()
    events, param_type, model_union = ga_events() if arguments.dialect == "ga" else beta_events()
    models = TypeAdapter(model_union)
    for event in events:
        text = json.dumps(maybe_transform(event, param_type))
        models.validate_json(text, strict=True)
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
