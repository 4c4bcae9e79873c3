"""The resource detector's pure rules: which templates are eligible and which
policy claims each."""

from karmada.matching.eligibility import DEFAULT_SKIPPED_NAMESPACES, skip_reason
from karmada.matching.policies import (
    Candidate,
    Claim,
    PolicyMatch,
    claim_of,
    claimed_by_other_feature,
    match_policy,
)

__all__ = [
    "DEFAULT_SKIPPED_NAMESPACES",
    "Candidate",
    "Claim",
    "PolicyMatch",
    "claim_of",
    "claimed_by_other_feature",
    "match_policy",
    "skip_reason",
]
