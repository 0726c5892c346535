"""The prediction's explanation and basis are records (PredictionCode notes) and
render/prediction_text writes their sentences."""

from __future__ import annotations

import dataclasses
import json

from launchprof.analysis import analyse
from launchprof.analysis.load import stored_profile
from launchprof.model.findings import PredictionCode
from launchprof.model.core import Report
from launchprof.crossover.replay_model import predict_speedup
from launchprof.render import figures
from launchprof.render.words.prediction_text import SENTENCES, basis_sentence, prediction_sentence
from tests.recorded import load


def test_every_prediction_code_has_a_sentence() -> None:
    assert set(SENTENCES) == {code.value for code in PredictionCode}


def test_a_prediction_without_a_profile_says_why_as_a_record() -> None:
    pred = predict_speedup(10, None, None, None, 100.0, None)
    assert pred.why is not None and pred.why.code == PredictionCode.NO_PROFILE.value
    assert pred.explanation == prediction_sentence(pred.why)


def test_the_recorded_prediction_keeps_its_records_and_its_strings_are_their_sentences() -> None:
    run = load("long_kernels")
    report = analyse(run, stored_profile(run.profile))
    pred = report.prediction
    assert pred.explanation_finding.code == PredictionCode.REPLAY_ESTIMATE.value
    assert pred.explanation == prediction_sentence(pred.explanation_finding)
    assert pred.explanation_finding.params["speedup"] == pred.median  # figures, not text
    codes = [r.code for r in pred.basis_findings]
    assert codes[0] == PredictionCode.PROFILE_BASIS.value and PredictionCode.NODE_TIMES_SCALED.value in codes
    assert pred.basis == basis_sentence(pred.basis_findings)
    back = Report.from_dict(json.loads(report.to_json()))
    assert back.prediction == pred
    assert figures.prediction(back)["explanation"] == pred.explanation and figures.prediction(back)["basis"] == pred.basis


def test_a_prediction_without_records_keeps_its_strings() -> None:
    run = load("long_kernels")
    report = analyse(run, stored_profile(run.profile))
    old = dataclasses.replace(report.prediction, explanation="older words", basis="older basis", explanation_finding=None, basis_findings=[])
    shown = figures.prediction(dataclasses.replace(report, prediction=old))
    assert shown["explanation"] == "older words" and shown["basis"] == "older basis"
