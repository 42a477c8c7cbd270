"""Controls: how well a task can be solved without understanding genes, and what a model adds over them.

One wing, one module per job, read in this order:

- `table`: the table of controls (`CONTROLS`): what each reads, what it guards against, how it is fitted.
- `features`: each control's feature function.
- `fit`: fitting them on tasks (seeded controls over as many seeds as their mean needs).
- `build`: scoring them on a data folder under each fold scheme and storing them (`add_controls`).
- `stored`: reading the stored control table and predictions back, checked against their scores.
- `covered`: the controls on the rows a model covers, without a refit, and the lift over them.
- `added`: what a model adds over the name control ("added over names").

A control depends only on the data, so it is computed once per data revision and fold scheme (at build time, or by
`genebench controls --data DIR`). Adding a control is one record in `table` plus its function in `features`.
"""
