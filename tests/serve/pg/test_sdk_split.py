"""The official SDK's acceptance cases again, on a PostgreSQL deployment split by role:
one API process and one worker process running turns as DBOS workflows. Same test code,
only the deployment differs (`split_serving` in place of the embedded `serving`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.serve import (
    harness,
    test_sdk_basic,
    test_sdk_environments,
    test_sdk_errors,
    test_sdk_files,
    test_sdk_resources,
    test_sdk_settings,
    test_sdk_tools,
)
from wisp.testing import ScriptedServer

pytest.importorskip("dbos", reason="DBOS Transact is not installed (pip install dbos)")

Case = Callable[[Path, ScriptedServer], None]
CASES: list[Case] = [
    test_sdk_basic.test_a_turn_ends_with_the_agents_message,
    test_sdk_basic.test_list_pages_and_the_stream_follows_live,
    test_sdk_basic.test_last_event_id_resumes_the_stream_after_it,
    test_sdk_basic.test_session_lifecycle_initial_events_update_archive_delete,
    test_sdk_basic.test_previews_come_only_when_asked_and_are_never_stored,
    test_sdk_tools.test_a_custom_tool_is_answered_through_the_sdks_tool_runner,
    test_sdk_tools.test_bash_runs_in_a_cloud_environment,
    test_sdk_tools.test_a_self_hosted_session_runs_bash_and_edit_through_the_sdk_runner,
    test_sdk_tools.test_always_ask_runs_the_call_once_allowed,
    test_sdk_tools.test_always_ask_refuses_the_call_when_denied,
    test_sdk_tools.test_an_interrupt_stops_a_slow_answer_and_the_session_goes_idle,
    test_sdk_tools.test_the_servers_deny_rules_reach_the_toolsets_calls_whatever_the_spelling,
    test_sdk_settings.test_settings_wisp_would_ignore_are_refused_naming_the_field,
    test_sdk_settings.test_list_filters_are_honoured_or_refused,
    test_sdk_settings.test_a_budget_stops_the_session_and_its_cost_is_reported,
    test_sdk_settings.test_session_updated_is_logged_with_the_changed_fields,
    test_sdk_settings.test_web_fetch_is_offered_and_honours_the_agents_domains,
    test_sdk_environments.test_agent_versions_are_listed_newest_first_and_page,
    test_sdk_environments.test_an_environment_is_updated,
    test_sdk_environments.test_the_work_queue_leases_heartbeats_and_stops,
    test_sdk_environments.test_the_sdks_environment_worker_serves_a_session_and_honours_a_stop,
    test_sdk_environments.test_a_killed_environment_worker_is_replaced_and_the_session_completes,
    test_sdk_files.test_files_are_uploaded_listed_downloaded_and_deleted,
    test_sdk_errors.test_failed_model_requests_are_retried_visibly_then_exhausted,
    test_sdk_errors.test_an_unknown_tool_is_answered_to_the_model_as_an_error,
    test_sdk_errors.test_the_apis_validation_rules,
    test_sdk_resources.test_a_file_resource_is_read_at_its_mount_path_by_its_session_only,
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__.removeprefix("test_"))
def test_on_an_api_and_a_worker_process(case: Case, tmp_path: Path, server: ScriptedServer,
                                        dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    split = functools.partial(harness.split_serving, dsn=dsn)
    for module in (test_sdk_basic, test_sdk_tools, test_sdk_settings, test_sdk_environments,
                   test_sdk_files, test_sdk_resources, test_sdk_errors):
        monkeypatch.setattr(module, "serving", split)
    case(tmp_path, server)
