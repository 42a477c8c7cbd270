// genebench leaderboard: renders the embedded JSON with DOM text nodes only (never innerHTML).
// Every number shown is a cell of that JSON, [text, sort value], written by genebench.results' formatters from the
// stored results (genebench.leaderboard.site): this script shows, filters and sorts cells, and computes none.
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("leaderboard-data").textContent);
  var FILTERS = ["category", "type", "modality", "size"];
  var DASH = "\u2013";
  // One table per fold scheme a run is listed under: runs are ranked and sorted only against runs of their table.
  var SECTIONS = {
    paper: { ranked: "summary-table", unranked: "unranked-table", columns: [
      ["overall", "AUC (paper folds)"], ["lift", "Lift (paper folds)"], ["tasks", "Tasks (paper folds)"],
      ["family", "AUC (family folds)"], ["familyLift", "Lift (family folds)"],
      ["understanding", "Understanding (family folds)"], ["familyTasks", "Tasks (family folds)"]], scheme: "paper" },
    family: { ranked: "family-table", unranked: null, columns: [
      ["overall", "AUC (family folds)"], ["lift", "Lift (family folds)"],
      ["understanding", "Understanding (family folds)"], ["tasks", "Tasks (family folds)"]], scheme: "family" },
    // The paper's published models: their own group, never ranked (not even among themselves).
    published: { ranked: "published-table", unranked: null, rank: false, columns: [
      ["overall", "AUC (as published)"], ["tasks", "Tasks (as published, of this page's)"]], scheme: "the paper's" }
  };
  var PUBLISHED = data.published || { label: "", models: [], modalities: [] };
  var state = { category: "", type: "", modality: "", size: "", flagged: false, published: true, sorts: {},
    taskSort: {} };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function text(cell) { return cell ? cell[0] : DASH; }
  function value(cell) { return cell ? cell[1] : null; }

  function viewKey() { return state.category + "|" + state.type + "|" + (state.flagged ? "1" : ""); }
  function cells(model) { return (data.views[viewKey()] || {})[model.key] || {}; }

  // The column a table opens sorted by, which its Rank follows: Understanding where a run of the table has it.
  function openingColumn(section) {
    var any = data.models.some(function (m) {
      return m.section === section && value((data.views["||"][m.key] || {}).understanding) !== null;
    });
    return any ? "understanding" : "overall";
  }

  Object.keys(SECTIONS).forEach(function (section) {
    var col = openingColumn(section);
    SECTIONS[section].rankBy = col;
    state.sorts[SECTIONS[section].ranked] = { col: col, desc: true };
    if (SECTIONS[section].unranked) { state.sorts[SECTIONS[section].unranked] = { col: "overall", desc: true }; }
  });

  function columnLabel(section, col) {
    var found = SECTIONS[section].columns.filter(function (c) { return c[0] === col; })[0];
    return found ? found[1] : col;
  }

  // Incomplete tasks stay out of every table, as in `genebench report`.
  function selectedTasks() {
    return data.tasks.filter(function (t) {
      return !t.incomplete && (!state.category || t.category === state.category) &&
        (!state.type || t.type === state.type) && !(state.flagged && t.shortcut);
    });
  }

  function listedModels() { return data.models.concat(state.published ? PUBLISHED.models : []); }

  function visibleModels() {
    return listedModels().filter(function (m) {
      return (!state.modality || m.modality === state.modality) && (!state.size || m.size === state.size);
    });
  }

  function compare(a, b, desc) {
    var missingA = a === null || a === undefined, missingB = b === null || b === undefined;
    if (missingA || missingB) { return missingA === missingB ? 0 : (missingA ? 1 : -1); }
    var order = typeof a === "number" ? a - b : String(a).localeCompare(String(b));
    return desc ? -order : order;
  }

  function sortableHeader(row, col, label, sort, onSort, title) {
    var th = el("th", { "data-col": col, scope: "col", tabindex: "0" }, label);
    if (title) { th.setAttribute("title", title); }
    if (sort.col === col) { th.setAttribute("aria-sort", sort.desc ? "descending" : "ascending"); }
    th.addEventListener("click", function () { onSort(col); });
    row.appendChild(th);
  }

  function toggle(sort, col, defaultDesc) {
    if (sort.col === col) { sort.desc = !sort.desc; } else { sort.col = col; sort.desc = defaultDesc; }
  }

  function renderSummary(tasks, models) {
    Object.keys(SECTIONS).forEach(function (section) {
      var spec = SECTIONS[section];
      var mine = models.filter(function (m) { return m.section === section; });
      var ranked = spec.unranked ? mine.filter(function (m) { return m.ranked; }) : mine;
      fillSummary(spec.ranked, section, tasks, ranked, spec.rank !== false);
      if (spec.unranked) {
        var unranked = mine.filter(function (m) { return !m.ranked; });
        document.getElementById("unranked").hidden = !unranked.length;
        fillSummary(spec.unranked, section, tasks, unranked, false);
      } else {
        document.getElementById(section + "-section").hidden = !listedModels().some(function (m) {
          return m.section === section;
        });
      }
    });
  }

  function fillSummary(tableId, section, tasks, models, ranked) {
    var spec = SECTIONS[section], sort = state.sorts[tableId];
    var categories = data.categories.filter(function (c) { return tasks.some(function (t) { return t.category === c; }); });
    var rows = models.map(function (m) { return { model: m, cells: cells(m) }; });
    // Rank: the order the table opens in (spec.rankBy), among the complete runs of this table that have that score.
    rows.filter(function (row) { return ranked && row.model.ranked && value(row.cells[spec.rankBy]) !== null; })
      .sort(function (a, b) { return compare(value(a.cells[spec.rankBy]), value(b.cells[spec.rankBy]), true); })
      .forEach(function (row, i) { row.rank = i + 1; });
    var key = function (row) {
      if (sort.col === "rank") { return row.rank; }
      if (sort.col === "model") { return row.model.id + "@" + row.model.revision; }
      if (sort.col === "input") { return row.model.modality; }
      if (sort.col === "size") { return row.model.n_parameters; }
      if (sort.col === "coverage") { return row.model.coverage; }
      return value(row.cells[sort.col]);
    };
    rows.sort(function (a, b) { return compare(key(a), key(b), sort.desc) || compare(a.rank, b.rank, false); });

    var table = document.getElementById(tableId);
    table.textContent = "";
    var head = el("tr");
    var onSort = function (col) { toggle(sort, col, !["rank", "model", "input"].includes(col)); render(); };
    if (ranked) {
      sortableHeader(head, "rank", "Rank", sort, onSort, "by " + columnLabel(section, spec.rankBy) +
        ", the order the table opens in; ranked against the runs of this table only");
    }
    sortableHeader(head, "model", "Model", sort, onSort);
    spec.columns.forEach(function (c) { sortableHeader(head, c[0], c[1], sort, onSort); });
    sortableHeader(head, "coverage", "Coverage", sort, onSort);
    categories.forEach(function (c) {
      sortableHeader(head, "cat:" + c, c + " (" + spec.scheme + " folds)", sort, onSort);
    });
    sortableHeader(head, "input", "Input", sort, onSort);
    sortableHeader(head, "size", "Size", sort, onSort);
    if (!ranked) { head.appendChild(el("th", { scope: "col" }, "Why not ranked")); }
    head.appendChild(el("th", { scope: "col" }, "Details"));
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    rows.forEach(function (row) {
      var m = row.model;
      var tr = el("tr", { "data-model": m.key });
      if (ranked) { tr.appendChild(el("td", { "data-col": "rank" }, row.rank ? row.rank : DASH)); }
      var name = tr.appendChild(el("td", { "data-col": "model" }));
      name.appendChild(el("span", { class: "model-id" }, m.id));
      name.appendChild(el("span", { class: "muted revision", title: m.revision }, " @" + m.revision.slice(0, 12)));
      spec.columns.forEach(function (c) { tr.appendChild(el("td", { "data-col": c[0] }, text(row.cells[c[0]]))); });
      tr.appendChild(el("td", { "data-col": "coverage" }, m.coverage_text));
      categories.forEach(function (c) {
        tr.appendChild(el("td", { "data-col": "cat:" + c }, text(row.cells["cat:" + c])));
      });
      tr.appendChild(el("td", { "data-col": "input", title: m.license ? "licence: " + m.license : "" }, m.modality));
      tr.appendChild(el("td", { "data-col": "size" }, m.size_label));
      if (!ranked) { tr.appendChild(el("td", { "data-col": "note" }, m.note)); }
      var links = tr.appendChild(el("td", { "data-col": "details" }));
      var meta = links.appendChild(el("a", { class: "meta-link" }, "metadata"));
      meta.href = m.meta_href;
      links.appendChild(document.createTextNode(" \u00b7 "));
      var results = links.appendChild(el("a", { class: "results-link" }, "results"));
      results.href = m.results_href;
      if (m.reference) {
        links.appendChild(document.createTextNode(" \u00b7 "));
        var reference = links.appendChild(el("a", { class: "reference-link", rel: "noopener" }, "reference"));
        reference.href = m.reference;
      }
      body.appendChild(tr);
    });
  }

  function scoreCell(model, task) {
    var mine = (data.cells[model.key] || {})[task.name] || {};
    var td = el("td", { "data-col": "model:" + model.key });
    var own = { paper: "paper ", family: "family ", published: "published " }[model.section];
    var parts = [["own", own], ["family", "; family "],
                 ["added", "; added "]];
    parts.forEach(function (part) {
      if (!mine[part[0]]) { return; }
      td.appendChild(document.createTextNode(part[1]));
      td.appendChild(el("span", { "data-part": part[0] }, text(mine[part[0]])));
    });
    if (!td.childNodes.length) { td.textContent = DASH; }
    return td;
  }

  function renderTaskTables(tasks, models) {
    var container = document.getElementById("task-tables");
    container.textContent = "";
    data.categories.forEach(function (category) {
      var rows = tasks.filter(function (t) { return t.category === category; });
      if (!rows.length) { return; }
      var sort = state.taskSort[category] || (state.taskSort[category] = { col: "task", desc: false });
      var key = function (t) {
        if (sort.col === "task") { return t.name; }
        if (sort.col === "type") { return t.type; }
        if (sort.col === "genes") { return t.n_entities; }
        return value(((data.cells[sort.col.slice(6)] || {})[t.name] || {}).own);
      };
      rows = rows.slice().sort(function (a, b) { return compare(key(a), key(b), sort.desc) || compare(a.name, b.name, false); });
      var details = container.appendChild(el("details", { open: "" }));
      details.appendChild(el("summary", {}, category + " (" + rows.length + (rows.length === 1 ? " task)" : " tasks)")));
      var table = details.appendChild(el("div", { class: "scroll" }))
        .appendChild(el("table", { class: "task-table sortable", "data-category": category }));
      var head = el("tr");
      var onSort = function (col) { toggle(sort, col, col.indexOf("model:") === 0); render(); };
      sortableHeader(head, "task", "Task", sort, onSort);
      sortableHeader(head, "type", "Type", sort, onSort);
      sortableHeader(head, "genes", "Genes or pairs", sort, onSort);
      models.forEach(function (m) { sortableHeader(head, "model:" + m.key, m.id, sort, onSort); });
      table.appendChild(el("thead")).appendChild(head);
      var body = table.appendChild(el("tbody"));
      rows.forEach(function (t) {
        var tr = body.appendChild(el("tr", { "data-task": t.name }));
        var name = tr.appendChild(el("td", { "data-col": "task" }, t.name));
        if (t.shortcut && t.best_control) {
          name.appendChild(el("span", { class: "shortcut", title: "shortcut-solvable: a control reaches AUC " +
            data.shortcut_auc + " under a fold scheme" }, " \u2691 " + t.best_control));
        }
        tr.appendChild(el("td", { "data-col": "type" }, t.type));
        tr.appendChild(el("td", { "data-col": "genes" }, t.entities));
        models.forEach(function (m) { tr.appendChild(scoreCell(m, t)); });
      });
    });
  }

  function renderFigures() {
    var container = document.getElementById("figures");
    data.figures.forEach(function (f) {
      var figure = container.appendChild(el("figure"));
      var img = figure.appendChild(el("img", { alt: f.caption, loading: "lazy" }));
      img.src = f.src;
      figure.appendChild(el("figcaption", {}, f.caption));
    });
  }

  function renderLeftOut() {
    var note = document.getElementById("understanding-out");
    note.hidden = !data.understanding_out.length;
    note.textContent = "Understanding leaves out " + data.understanding_out.length + " task" +
      (data.understanding_out.length === 1 ? "" : "s") + ": " + data.understanding_out.map(function (t) {
        return t[0] + " (" + t[1] + ")";
      }).join("; ") + ".";
    var reference = document.getElementById("names-only");
    reference.hidden = !data.names_only.length;
    reference.textContent = data.names_only.length ? data.names_only[0] + " " + data.names_only.slice(1).map(
      function (line) { return line.trim(); }).join("; ") + "." : "";
  }

  function render() {
    var tasks = selectedTasks(), models = visibleModels();
    renderSummary(tasks, models);
    renderTaskTables(tasks, models);
    document.getElementById("filter-status").textContent =
      models.filter(function (m) { return m.section !== "published"; }).length + " of " + data.models.length +
      " models, " + tasks.length + " of " + data.tasks.length + " tasks";
  }

  function setupFilters() {
    var choices = {
      category: data.categories.map(function (c) { return [c, c]; }),
      type: data.task_types.map(function (t) { return [t, t]; }),
      modality: data.modalities.concat(PUBLISHED.modalities.filter(function (m) {
        return data.modalities.indexOf(m) < 0;
      })).map(function (m) { return [m, m]; }),
      size: data.sizes.map(function (s) { return [s.key, s.label]; })
    };
    FILTERS.forEach(function (name) {
      var select = document.getElementById("filter-" + name);
      choices[name].forEach(function (choice) { select.appendChild(el("option", { value: choice[0] }, choice[1])); });
      select.addEventListener("change", function () { state[name] = select.value; render(); });
    });
    var flagged = document.getElementById("filter-flagged");
    flagged.addEventListener("change", function () { state.flagged = flagged.checked; render(); });
    var shown = document.getElementById("filter-published");
    shown.addEventListener("change", function () { state.published = shown.checked; render(); });
    document.getElementById("filter-reset").addEventListener("click", function () {
      FILTERS.forEach(function (name) { state[name] = ""; document.getElementById("filter-" + name).value = ""; });
      state.flagged = false;
      flagged.checked = false;
      state.published = shown.checked = true;
      render();
    });
  }

  document.getElementById("provenance").textContent =
    "Generated " + data.generated + " from " + data.models.length + " model runs; data revision " +
    data.data_hashes.join(", ") + ". Ranked: runs holding every task of the data revision, within their fold scheme.";
  document.getElementById("published-label").textContent = PUBLISHED.label;
  setupFilters();
  renderFigures();
  renderLeftOut();
  render();
}());
