# Admission rules beyond the YAML policy (examples/admit/policy.yaml names this file).
#
# `shipmoor admit` evaluates `data.shipmoor.admit.deny` over the verified statement and the
# verification facts; each message in the set is one reason to deny. These rules can only add
# reasons: they cannot admit what the YAML rules or the VSA checks denied.
#
# Try it alone with `opa eval -d extra.rego -i input.json data.shipmoor.admit.deny`, or with
# conftest (`--namespace shipmoor.admit`).
package shipmoor.admit

import rego.v1

claim := input.statement.predicate["https://shipmoor.dev/claim-check/v1"]

# A judge that confirmed a block stands, whatever the verdict says.
deny contains msg if {
	some d in claim.dispositions
	d.judge.result == "block"
	msg := sprintf("criterion `%s`: the judge blocked it", [d.id])
}

# A change that edits its own harness (the test runner's configuration, conftest.py, ...)
# is reviewed by a person before it ships, even when its tests flip.
deny contains msg if {
	count(claim.harness_changes) > 0
	msg := sprintf("the change edits its harness: %s", [concat(", ", claim.harness_changes)])
}

# A regex match at head is weaker evidence than a test that fails at base and passes at head:
# required criteria must rest on a test or a command.
deny contains msg if {
	some d in claim.dispositions
	d.required
	d.floor.binding == "check.pattern"
	msg := sprintf("required criterion `%s` rests on a `check.pattern`, not a test", [d.id])
}
