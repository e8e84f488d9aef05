"""The judge audit as a user meets it: ``kbench audit sample`` and ``kbench audit RUN
--labels`` in a subprocess (the other command lines in this process, as such a subprocess would
show them: tests/cli_run.py), and the Judge audit page (AppTest): labelling, the session-only
note, a bad sheet that changes nothing, and two strangers who never see each other's labels."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from kbench_core import audit
from kbench_core.audit import store
from kbench_core.io import load_run
from tests import cli_run
from tests.conftest import ROOT

SAMPLE = ROOT / "sample_data" / "judged.csv"


def _kbench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kbench_core.cli", *args],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _kbench_here(*args: str) -> subprocess.CompletedProcess:
    """What :func:`_kbench` returns, run in this process without a child's ~2.5 s of
    imports."""
    return cli_run.kbench(*args, cwd=ROOT)


def _fill(sheet: Path, out: Path, *, every: int = 1, value: str = "yes",
          reviewer: str = "ann") -> int:
    """Fill in every ``every``-th row of a blank sheet; returns the rows filled."""
    lines = sheet.read_text().splitlines(keepends=True)
    head = [line for line in lines if line.startswith("#")]
    body = list(csv.reader(io.StringIO("".join(lines[len(head):]))))
    header, rows = body[0], body[1:]
    filled = 0
    for k, row in enumerate(rows):
        if k % every == 0:
            row[header.index("target_found")] = value if k % 2 else "no"
            row[header.index("reviewer")] = reviewer
            filled += 1
    text = io.StringIO()
    csv.writer(text, lineterminator="\n").writerows([header, *rows])
    out.write_text("".join(head) + text.getvalue())
    return filled


def test_audit_commands_write_a_sheet_and_print_the_corrected_table(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    done = _kbench("audit", "sample", str(SAMPLE), "--n", "30", "--seed", "3", "--out",
                   str(sheet))
    assert done.returncode == 0, done.stderr
    assert "30 items to label of 252" in done.stderr
    drawn = audit.sample(load_run(SAMPLE).frame, 30, seed=3)
    written = pd.read_csv(sheet, comment="#", keep_default_na=False)
    assert written[["sample", "model", "prompt_type"]].astype(str).values.tolist() == \
        drawn[["sample", "model", "prompt_type"]].astype(str).values.tolist()
    assert (written["target_found"] == "").all()
    filled = tmp_path / "filled.csv"
    assert _fill(sheet, filled) == 30
    done = _kbench("audit", str(SAMPLE), "--labels", str(filled), "--format", "markdown")
    assert done.returncode == 0, done.stderr
    assert "| model | judge\\_only | judge\\_only\\_low" not in done.stdout
    assert "judge audit" in done.stdout and '"n_labels": 30' in done.stdout
    assert done.stdout.count("synthetic-detector-") >= 3
    assert "| majority |" in done.stdout  # the judges' accuracy table follows
    # the same numbers as the API
    labels, _ = audit.read_labels(filled)
    table = audit.corrected(load_run(SAMPLE).frame, labels)
    first = table.iloc[0]
    assert f"{first['judge_only']:.4f}" in done.stdout
    # a second sample never draws a labelled item again
    more = tmp_path / "more.csv"
    done = _kbench_here("audit", "sample", str(SAMPLE), "--n", "20", "--labels", str(filled),
                        "--out", str(more))
    assert done.returncode == 0, done.stderr
    again = pd.read_csv(more, comment="#", keep_default_na=False)
    old = set(map(tuple, written[["sample", "model", "prompt_type"]].values.tolist()))
    assert not old & set(map(tuple, again[["sample", "model", "prompt_type"]]
                             .values.tolist()))


def test_audit_commands_refuse_with_file_row_and_field(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    assert _kbench_here("audit", "sample", str(SAMPLE), "--n", "5", "--out",
                        str(sheet)).returncode == 0
    bad = tmp_path / "bad.csv"
    _fill(sheet, bad, value="perhaps")
    done = _kbench_here("audit", str(SAMPLE), "--labels", str(bad))
    assert done.returncode == 1
    assert "bad.csv" in done.stderr and "field 'target_found'" in done.stderr
    assert "'perhaps' is not a label" in done.stderr and "Traceback" not in done.stderr
    other = tmp_path / "other.csv"
    text = sheet.read_text().replace(load_run(SAMPLE).content_hash, "0" * 64)
    other_sheet = tmp_path / "other_sheet.csv"
    other_sheet.write_text(text)
    _fill(other_sheet, other)
    done = _kbench_here("audit", str(SAMPLE), "--labels", str(other))
    assert done.returncode == 1 and "for another run" in done.stderr
    done = _kbench_here("audit", "sample", str(SAMPLE), "--n", "999", "--out", str(sheet))
    assert done.returncode == 1 and "n = 999 is more than the 252 items left" in done.stderr
    done = _kbench_here("audit", str(ROOT / "sample_data" / "bias.csv"), "--labels", str(bad))
    assert done.returncode == 1 and "is a bias run" in done.stderr
    done = _kbench_here("audit", str(SAMPLE))
    assert done.returncode == 2 and "needs --labels FILE" in done.stderr


# ---------------------------------------------------------------------------- the page


def _store_labels(folder: Path, run, drawn: pd.DataFrame, found: list[bool]) -> pd.DataFrame:
    """Labels of ``drawn`` by reviewer "ann", kept in the workspace ``folder``."""
    labels = drawn[["sample", "model", "prompt_type"]].astype(str).copy()
    labels["target_found"] = found
    labels["reviewer"] = "ann"
    labels["labelled_at"] = audit.now_utc()
    labels["note"] = ""
    labels["run_sha256"] = run.content_hash
    store.LabelStore(folder, run.content_hash).append(labels.to_dict("records"),
                                                     reviewer="ann", session="s")
    return labels


def _page(monkeypatch, args: str = "") -> AppTest:
    monkeypatch.setenv("KBENCH_APP_ARGS", args)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/audit.py").run()
    return at


def _sign_in(at: AppTest, name: str) -> None:
    at.text_input(key="aud_reviewer_name").input(name)
    next(b for b in at.button if b.label == "Start labelling").click()
    at.run()


def _press(at: AppTest, label: str) -> None:
    next(b for b in at.button if b.label == label).click()
    at.run()


def _progress(at: AppTest) -> str:
    return at.get("progress")[0].proto.text


def test_the_page_labels_item_by_item_in_this_session_only(monkeypatch) -> None:
    at = _page(monkeypatch)
    assert not at.exception
    assert any("Who is labelling" in m.value for m in at.markdown)
    _sign_in(at, "Ann")
    assert any("live only in this browser session" in i.value for i in at.info)
    assert _progress(at) == "0 of 60 labelled by you (Ann)"
    _press(at, "Found")
    _press(at, "Not found")
    _press(at, "Found")
    assert _progress(at) == "3 of 60 labelled by you (Ann)"
    assert next(s.value for s in at.subheader) == "Item 4 of 60"
    _press(at, "Previous")
    assert next(s.value for s in at.subheader) == "Item 3 of 60"
    assert any("Your label: **found**" in c.value for c in at.caption)
    # the results: the corrected rates of the three models with their labels
    assert not at.exception
    # a second stranger on the same server sees none of Ann's labels
    other = _page(monkeypatch)
    _sign_in(other, "Bo")
    assert _progress(other) == "0 of 60 labelled by you (Bo)"
    assert any("No label yet" in i.value for i in other.info)


def test_a_bad_sheet_changes_nothing_and_a_good_one_is_imported(monkeypatch,
                                                                tmp_path: Path) -> None:
    at = _page(monkeypatch, f"--workspace {tmp_path}")
    _sign_in(at, "Ann")
    _press(at, "Found")
    assert _progress(at) == "1 of 60 labelled by you (Ann)"
    files = list((tmp_path / "labels").rglob("*.csv"))
    assert len(files) == 1
    before = files[0].read_bytes()
    run = load_run(SAMPLE)
    drawn = audit.sample(run.frame, 60, seed=0)
    bad = audit.blank_sheet(drawn.iloc[5:8], run_sha256=run.content_hash)
    bad["target_found"] = ["yes", "nope", "no"]
    at.file_uploader(key="aud_upload").upload(
        "bad.csv", audit.labels_csv(bad).encode(), "text/csv").run()
    assert not at.exception
    assert any("nothing already labelled changed" in e.value for e in at.error)
    assert any("row 3, field 'target_found'" in c.value for c in at.code)
    assert files[0].read_bytes() == before  # nothing already labelled changed
    assert _progress(at) == "1 of 60 labelled by you (Ann)"
    good = audit.blank_sheet(drawn.iloc[10:14], run_sha256=run.content_hash)
    good["target_found"] = ["yes", "no", "yes", "=1+1"]
    good.loc[good.index[3], "target_found"] = ""  # not labelled yet: skipped, not refused
    good["note"] = "=HYPERLINK(\"http://evil.example\")"
    at.file_uploader(key="aud_upload").upload(
        "good.csv", audit.labels_csv(good).encode(), "text/csv").run()
    assert not at.exception
    labels, _ = store.LabelStore(tmp_path, run.content_hash).read(run.frame)
    assert len(labels) == 4  # 1 made on the page + 3 imported
    assert set(labels["note"]) == {"", "=HYPERLINK(\"http://evil.example\")"}
    # kept as text, neutralised in the file a spreadsheet would open
    assert b"'=HYPERLINK" in b"".join(p.read_bytes() for p in files[0].parent.iterdir())


def test_the_vulnerability_page_says_when_the_labels_find_the_judge_off(monkeypatch,
                                                                        tmp_path: Path) -> None:
    run = load_run(SAMPLE)
    drawn = audit.sample(run.frame, 90, seed=0)
    # a reviewer who overrules every "found" of the lenient majority: the judge is far off
    _store_labels(tmp_path, run, drawn, [False] * len(drawn))
    monkeypatch.setenv("KBENCH_APP_ARGS", f"--workspace {tmp_path}")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/vuln.py").run()
    assert not at.exception and at.title[0].value == "Vulnerability detection"
    assert any("off beyond chance" in w.value for w in at.warning)
    at.switch_page("views/agreement.py").run()
    assert not at.exception and at.title[0].value == "Judge agreement"
    assert any("off beyond chance" in w.value for w in at.warning)
    # and not without labels
    monkeypatch.setenv("KBENCH_APP_ARGS", "")
    plain_page = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    plain_page.run()
    plain_page.switch_page("views/vuln.py").run()
    assert plain_page.title[0].value == "Vulnerability detection"
    assert not any("off beyond chance" in w.value for w in plain_page.warning)


def test_figures_with_labels_add_the_audit_with_its_provenance(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    assert _kbench_here("audit", "sample", str(SAMPLE), "--n", "30", "--out",
                        str(sheet)).returncode == 0
    filled = tmp_path / "filled.csv"
    _fill(sheet, filled)
    out = tmp_path / "figs"
    done = _kbench_here("figures", str(SAMPLE), "--labels", str(filled), "--out", str(out),
                        "--items", "audit_confusion,audit_corrected_rates")
    assert done.returncode == 0, done.stderr
    table = (out / "judged_audit_corrected_rates.csv").read_text()
    assert '"audit_labels": 30' in table and '"audit_reviewers": 1' in table
    assert "audit_labels_sha256" in table
    confusion = pd.read_csv(out / "judged_audit_confusion.csv", comment="#")
    assert confusion["judge"].tolist()[0] == "majority"
    # every labelled item is in one of the four cells of each judge (none failed here)
    cells = confusion[["n_both_found", "n_reviewer_only", "n_judge_only", "n_neither"]]
    assert (cells.sum(axis=1) == 30).all()


def test_report_with_labels_shows_the_audit_after_the_headline(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.csv"
    assert _kbench_here("audit", "sample", str(SAMPLE), "--n", "30", "--out",
                        str(sheet)).returncode == 0
    filled = tmp_path / "filled.csv"
    _fill(sheet, filled)
    out = tmp_path / "report.html"
    done = _kbench_here("report", str(SAMPLE), str(ROOT / "sample_data" / "bias.csv"), "--labels",
                        str(filled), "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    judged, bias = text.index('<h2 id="run-0">'), text.index('<h2 id="run-1">')
    assert judged < text.index("Detection rate corrected for the judge", judged) < bias
    assert "Each judge against the reviewers" in text
    assert "audit_labels&quot;: 30" in text and "audit_labels_sha256" in text
    # labels for a run not given are refused, naming the file
    other = tmp_path / "other.csv"
    other.write_text(filled.read_text().replace(load_run(SAMPLE).content_hash, "1" * 64))
    done = _kbench_here("report", str(SAMPLE), "--labels", str(other), "--out", str(out))
    assert done.returncode == 1 and "other.csv: labels for a run not given" in done.stderr


def test_the_page_weighs_labels_by_the_judge_it_drew_them_with() -> None:
    """The page draws its sample with the judge chosen on it: its tables weigh the labels
    by that judge's strata. 1,000 items, the first 100 truly found; j1 and j2 say exactly
    that; j0 says found on 0-49 and 100-149: its sensitivity is 50 / 100 = 0.5. Drawn with
    j0 (50 of its 100 "found", 150 of its 900 "not found"), the majority's strata would
    weigh j0's found items three times too much (sensitivity about 0.75)."""
    import numpy as np

    from kbench_app import audit as page

    truth = np.r_[np.ones(100, bool), np.zeros(900, bool)]
    j0 = np.zeros(1000, bool)
    j0[:50] = j0[100:150] = True
    frame = pd.concat([pd.DataFrame({"sample": [f"c{i:04d}" for i in range(1000)],
                                     "model": "m", "prompt_type": "direct", "judge": name,
                                     "is_vulnerable": True, "said_vulnerable": True,
                                     "target_found": found})
                       for name, found in (("j0", j0), ("j1", truth), ("j2", truth))])
    run = load_run(("three.csv", frame.to_csv(index=False).encode()))
    sensitivities = []
    for seed in range(4):
        drawn = page.drawn(run.frame, run, n=200, judge="j0", seed=seed)
        rows = [page.label_row((s, m, p), found=bool(truth[int(s[1:])]), reviewer="ann",
                               note="", run=run, p_include=float(q))
                for s, m, p, q in drawn[["sample", "model", "prompt_type", "p_include"]]
                .astype(str).itertuples(index=False)]
        labels = page.Labels(audit.labels_frame(rows), (), False)
        tables = page.results(run.frame, run, labels, judge="j0", method="ppi++")
        accuracy = tables["accuracy"].set_index("judge")
        sensitivities.append(accuracy.loc["j0", "sensitivity"])
        row = tables["corrected"].iloc[0]
        assert row["corrected_low"] <= 0.1 <= row["corrected_high"]
    assert np.mean(sensitivities) == pytest.approx(0.5, abs=0.12), sensitivities


def test_store_and_upload_warnings_show_file_names_as_text(monkeypatch, tmp_path: Path
                                                           ) -> None:
    run = load_run(SAMPLE)
    folder = tmp_path / "labels" / run.content_hash
    folder.mkdir(parents=True)
    (folder / "[click](javascript:alert(1)) **x**.csv").write_bytes(b"sample\n\xff\n")
    at = _page(monkeypatch, f"--workspace {tmp_path}")
    _sign_in(at, "Ann")
    assert not at.exception
    shown = [w.value for w in at.warning]
    assert any("not UTF" in w for w in shown), shown
    assert not any("[click](javascript" in w or "**x**" in w for w in shown), shown
    drawn = audit.sample(run.frame, 60, seed=0)
    sheet = audit.blank_sheet(drawn.iloc[:3], run_sha256=run.content_hash)
    sheet["target_found"] = ["yes", "no", ""]
    at.file_uploader(key="aud_upload").upload(
        "[a](http://evil.example).csv", audit.labels_csv(sheet).encode(), "text/csv").run()
    assert not at.exception
    shown = [w.value for w in at.warning] + [s.value for s in at.success]
    assert not any("[a](http" in w for w in shown), shown


def test_the_family_pages_warning_shows_model_names_as_text(monkeypatch) -> None:
    from kbench_app import audit as page

    run = load_run(SAMPLE)
    table = pd.DataFrame({"model": ["m"], "judge_only": [0.9],
                          "corrected_low": [0.1], "corrected_high": [0.3]})
    monkeypatch.setattr(page, "labels_of", lambda run: page.Labels(
        audit.labels_frame([{"sample": "c", "model": "m", "target_found": True}]), (), True))
    monkeypatch.setattr(page, "results", lambda *a, **k: {"corrected": table})
    from kbench_app.ui import plain

    for name in ("[x](http://evil.example)", "**bold** <b>x</b>"):
        table["model"] = [name]
        note = page.banner_needed(run)
        assert "off beyond chance" in note and f"({plain(name)})" in note, note


def test_the_labels_needed_table_speaks_words_and_shows_no_none() -> None:
    from kbench_app import audit as page

    needed = pd.DataFrame({"model": ["a", "b"], "half_width_now": [0.2957, float("nan")],
                           "n_labelled": [4, 2], "labels_needed": [80.0, float("nan")],
                           "note": ["", "no label where the judge said b · not found"]})
    view = page.needed_view(needed)["view"]
    assert list(view.columns) == ["Model", "Half-width now (95% CI)", "Labels",
                                  "More labels needed", "Note"]
    assert view.iloc[0].tolist()[:4] == ["a", "± 0.2957", "4", "80"]
    assert view.iloc[1].tolist()[:4] == ["b", "—", "2", "—"]


def test_a_run_with_nothing_to_audit_says_so(monkeypatch, tmp_path: Path) -> None:
    # every contract safe: no target to find (the page used to crash drawing 1 of 0 items)
    frame = pd.read_csv(SAMPLE)
    safe = tmp_path / "all_safe.csv"
    frame.assign(is_vulnerable=False, target_found=False).to_csv(safe, index=False)
    at = _page(monkeypatch, f"--no-samples {safe}")
    assert not at.exception, at.exception
    assert any("nothing to audit" in i.value for i in at.info), [i.value for i in at.info]


def test_a_note_belongs_to_its_item_not_to_its_place_in_the_sample(monkeypatch) -> None:
    at = _page(monkeypatch)
    _sign_in(at, "Ann")
    first = next(m.value for m in at.markdown if m.value.startswith("Contract"))
    note = next(t for t in at.text_input if t.label == "Note (optional)")
    note.input("typed for the first item").run()
    at.number_input(key="aud_seed").set_value(7).run()  # another sample: another item 1
    assert next(m.value for m in at.markdown if m.value.startswith("Contract")) != first
    note = next(t for t in at.text_input if t.label == "Note (optional)")
    assert note.value == ""


def test_the_item_line_shows_a_bidi_override_in_a_name_as_an_escape() -> None:
    # a right-to-left override in a detector's name would show the rest of "Contract c ·
    # detector d · prompt p" reversed: the reviewer could not tell which item they label
    from kbench_app import audit as page

    line = page.item_line(("c0001", "evil\u202edetector", "direct"))
    assert "\u202e" not in line and "\\u202e" in line.replace("\\\\", "\\")
    assert line.startswith("Contract **c0001** · detector **")


def test_the_page_offers_partial_where_the_run_grades_it_and_records_its_judge(
        monkeypatch, tmp_path: Path) -> None:
    at = _page(monkeypatch, f"--workspace {tmp_path}")
    _sign_in(at, "Ann")
    labels = [b.label for b in at.button]
    assert "Partial" in labels  # the sample run's judges grade partial type matches
    _press(at, "Partial")
    kept, _ = store.LabelStore(tmp_path, load_run(SAMPLE).content_hash).read()
    row = kept.iloc[0]
    assert bool(row["target_found"]) and bool(row["partial_found"])
    assert row["drawn_with"] == "majority"


def test_the_page_shows_what_the_detector_claimed(monkeypatch) -> None:
    """A BlockBench answer's findings are on the page as the detector wrote them, so the
    reviewer can tell whether it found the target (issue-37 walkthrough: the page showed the
    verdict, confidence and claimed lines only, empty for a target not found)."""
    from kbench_app import state

    records = ROOT / "tests" / "data" / "formats" / "blockbench_multi_judge_records.json"
    state._cached_load.clear()
    at = _page(monkeypatch, f"--no-samples {records}")
    _sign_in(at, "Ann")
    assert not at.exception, [e.value for e in at.exception]
    shown = [d.value for d in at.dataframe if "vulnerability_type_claimed" in d.value]
    assert shown and list(shown[0].columns) == ["finding_id", "vulnerability_type_claimed",
                                                "severity_claimed", "location_claimed",
                                                "description"]
    assert "classification" not in shown[0].columns  # the reviewer decides, not a judge
    assert any("The detector's findings" in m.value for m in at.markdown)


def test_the_reviewers_labels_are_the_judge_human_on_the_agreement_page(monkeypatch,
                                                                      tmp_path: Path) -> None:
    """Labels made on the Judge audit page are the judge `human` on the Judge agreement page
    (each LLM judge's agreement with the reviewers, on target_found only), recorded in the
    exports' provenance; the run's own numbers without them are unchanged."""
    from kbench_core import agreement
    from kbench_core.export import provenance_of

    run = load_run(SAMPLE)
    drawn = audit.sample(run.frame, 40, seed=0)
    labels = _store_labels(tmp_path, run, drawn, [k % 3 != 0 for k in range(len(drawn))])
    # the core view: 40 human rows, target_found as labelled, every other judged label empty
    human = audit.as_human_judge(run.frame, labels)
    assert len(human) == 40 and set(human["judge"].astype(str)) == {"human"}
    others = [c for c in agreement.judged_labels(run.frame) if c != "target_found"]
    assert others and human[others].isna().all().all()
    keyed = human.set_index(["sample", "model", "prompt_type"])["target_found"]
    want = labels.set_index(["sample", "model", "prompt_type"])["target_found"]
    assert keyed.astype(bool).reindex(want.index).tolist() == want.tolist()

    monkeypatch.setenv("KBENCH_APP_ARGS", f"--workspace {tmp_path} --no-samples {SAMPLE}")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("views/agreement.py").run()
    assert not at.exception, [e.value for e in at.exception]
    captions = " ".join(c.value for c in at.caption)
    assert "expert labels (`human`)" in captions and "40 items" in captions
    against = [d.value for d in at.dataframe if "judge" in d.value.columns
               and d.value["judge"].astype(str).isin(agreement.judges(run.frame)).any()
               and any("kappa" in str(c) or "κ" in str(c) for c in d.value.columns)]
    assert against, "no table of the judges against the reviewers"

    # the provenance of an export from the view names the labels
    from kbench_core.io import Run
    view = Run(run.name, run.kind, run.frame, {**run.meta, "audit_labels": 40,
                                               "audit_labels_sha256": "ab" * 8})
    options = provenance_of([view]).options
    assert options[f"audit_labels_sha256[{run.name}]"] == "ab" * 8
    assert provenance_of([run]).options == {}
