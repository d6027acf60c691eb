#!/usr/bin/env python3
"""`gpuadmit test -o junit` on the example policies' suites is well-formed JUnit XML in which every case
passed. Usage: junit_check.py GPUADMIT SUITES_DIR"""
import subprocess
import sys
import xml.etree.ElementTree as ET

run = subprocess.run([sys.argv[1], "test", "-o", "junit", sys.argv[2]], capture_output=True, text=True)
if run.returncode != 0:
    sys.exit(f"gpuadmit test exited {run.returncode}:\n{run.stdout}{run.stderr}")
root = ET.fromstring(run.stdout)
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
cases = root.findall("testsuite/testcase")
assert suites and cases, "no suites or cases"
assert int(root.get("tests")) == len(cases), (root.get("tests"), len(cases))
assert root.get("failures") == "0" and root.get("errors") == "0", root.attrib
assert not root.findall(".//failure") and not root.findall(".//error")
for suite in suites:
    assert int(suite.get("tests")) == len(suite.findall("testcase")), suite.attrib
print(f"{len(suites)} suites, {len(cases)} cases, all passed, well-formed JUnit")
