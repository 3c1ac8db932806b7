"""Kubernetes' ``library.Authz`` (1.27) and ``library.AuthzSelectors`` (1.31):
``k8s.io/apiserver/pkg/cel/library/authz.go`` at v0.36.2, declarations only. No value of these
types can exist in a device selector, but the declarations decide what compiles (and what
``check`` costs: cost.py).
"""

from __future__ import annotations

from dradash.dra.cel import types as t
from dradash.dra.cel.functions import BOOL, STR, declare, m


def register() -> None:
    # library.Authz (1.27) and AuthzSelectors (1.31): no value of these types can exist in a
    # device selector, but the declarations decide what compiles.
    names = ("Authorizer", "PathCheck", "GroupCheck", "ResourceCheck", "Decision")
    az, path, group, res, dec = (t.struct(f"kubernetes.authorization.{n}") for n in names)
    declare("path", m("authorizer_path", [az, STR], path))
    declare("group", m("authorizer_group", [az, STR], group))
    declare("serviceAccount", m("authorizer_serviceaccount", [az, STR, STR], az))
    declare("resource", m("groupcheck_resource", [group, STR], res))
    declare("subresource", m("resourcecheck_subresource", [res, STR], res))
    declare("namespace", m("resourcecheck_namespace", [res, STR], res))
    declare("name", m("resourcecheck_name", [res, STR], res))
    declare(
        "check",
        m("pathcheck_check", [path, STR], dec),
        m("resourcecheck_check", [res, STR], dec),
    )
    declare("errored", m("decision_errored", [dec], BOOL))
    declare("error", m("decision_error", [dec], STR))
    declare("allowed", m("decision_allowed", [dec], BOOL))
    declare("reason", m("decision_reason", [dec], STR))
    declare("fieldSelector", m("authorizer_fieldselector", [res, STR], res))
    declare("labelSelector", m("authorizer_labelselector", [res, STR], res))
