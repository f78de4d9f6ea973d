"""Counts test cases across JUnit-style XML reports (lit's --xunit-xml-output
and gtest's --gtest_output=xml) and prints one closing line:
"N passed, N failed, N skipped". Exits 1 if anything failed or a report is
missing (a suite that did not run is a failure, not zero tests)."""
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
missing = []
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        missing.append(f"{path}: {e}")
        continue
    for case in root.iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None or case.get("result") == "skipped":
            skipped += 1
        else:
            passed += 1
for m in missing:
    print(f"summarize: missing report {m}", file=sys.stderr)
failed += len(missing)
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed else 0)
