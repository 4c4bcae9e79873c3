"""What ``kubectl karmada get/describe/top/promote`` compute, as pure functions:
resource types resolved from discovery documents the command fetched, label
selectors, one multi-cluster table from the members' Table responses (or from
the Work status the agents reported), a describe page, the cluster resource
view, and the objects a promotion creates. No I/O here: the plugin's commands
fetch, these functions shape."""

from karmada.inspection.describe import DescribeInput, describe_page
from karmada.inspection.promote import PromotionError, promotion
from karmada.inspection.selectors import SelectorError, parse_selector, selector_matches
from karmada.inspection.tables import (
    CACHE_SOURCE_ANNOTATION,
    SOURCE_ANNOTATION,
    MemberTable,
    Row,
    merge_tables,
    objects_from_works,
    render_rows,
    work_table,
)
from karmada.inspection.top import cluster_usage_rows
from karmada.inspection.types import ResourceType, TypeError_, discovered_types, resolve_type

__all__ = [
    "CACHE_SOURCE_ANNOTATION",
    "SOURCE_ANNOTATION",
    "DescribeInput",
    "MemberTable",
    "PromotionError",
    "ResourceType",
    "Row",
    "SelectorError",
    "TypeError_",
    "cluster_usage_rows",
    "describe_page",
    "discovered_types",
    "merge_tables",
    "objects_from_works",
    "parse_selector",
    "promotion",
    "render_rows",
    "resolve_type",
    "selector_matches",
    "work_table",
]
