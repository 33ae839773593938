"""The export and import operations (graph.ops.bundle.exporter, graph.ops.bundle.importer)."""

from __future__ import annotations

from graph.ops.bundle.exporter import ExportInput, ExportOutput, bundle_export, bundle_export_json
from graph.ops.bundle.importer import ImportInput, ImportOutput, bundle_entries_of, bundle_import
from graph.ops.kit.operation import READ_ONLY, CallContext, Operation, ToolHints
from graph.ops.kit.scope import ReadScope, read_scope


def _export_scope(data: ExportInput, ctx: CallContext) -> ReadScope:
    return read_scope(project=data.project, tag=data.tag, cross_project=data.cross_project, ctx=ctx)


def _export(data: ExportInput, ctx: CallContext) -> ExportOutput:
    return bundle_export(data=data, scope=_export_scope(data, ctx))


def _export_json(data: ExportInput, ctx: CallContext) -> str:
    return bundle_export_json(data=data, scope=_export_scope(data, ctx))


def _import(data: ImportInput, ctx: CallContext) -> ImportOutput:
    entities = bundle_entries_of(data.data)
    return bundle_import(
        entries=lambda: entities,
        strategy=data.merge_strategy,
        namespace=data.namespace,
        source_host=ctx.source_host,
    )


EXPORT = Operation(
    name="export",
    summary=(
        "Export active memories to a portable JSON bundle (backup, sharing, migrating "
        "machines), optionally one namespace or one tag: the bound project's, those with no "
        "project and global ones (`scope` says which), or every project's with "
        "`cross_project: true`."
    ),
    input_model=ExportInput,
    output_model=ExportOutput,
    handler=_export,
    # REST sends the entries as SQLite wrote them (graph/ops/bundle/exporter.py).
    json_handler=_export_json,
    hints=READ_ONLY,
    examples=[{}, {"namespace": "team"}, {"tag": "project:myapp"}],
)
IMPORT = Operation(
    name="import",
    summary=(
        "Import a bundle produced by export. merge_strategy decides what happens to "
        "entities that already exist (skip, overwrite, append). Imported entities are "
        "marked untrusted until reviewed."
    ),
    input_model=ImportInput,
    output_model=ImportOutput,
    handler=_import,
    hints=ToolHints(read_only=False, destructive=True, idempotent=False),
    # destructive: `overwrite` replaces observations and tags.
    examples=[
        {"data": {"entities": []}, "merge_strategy": "skip"},
        {"data": {"entities": []}, "merge_strategy": "append", "namespace": "team"},
    ],
)
