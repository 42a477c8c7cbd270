// genebench leaderboard: renders the embedded JSON with DOM text nodes only (never innerHTML).
(function () {
  "use strict";

  var data = JSON.parse(document.getElementById("leaderboard-data").textContent);
  var FILTERS = ["category", "type", "modality", "size"];
  var state = {
    category: "", type: "", modality: "", size: "", flagged: false,
    summarySort: data.models.some(function (m) { return data.family[m.key]; }) ? { col: "understanding", desc: true }
      : { col: "rank", desc: false },
    unrankedSort: { col: "overall", desc: true }, taskSort: {}
  };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  // A mean over one task has no spread to show: "0.840 (1 task)", never "± 0.000".
  function fmt(cell) {
    if (!cell) { return "\u2013"; }
    return cell.n === 1 ? cell.mean.toFixed(3) + " (1 task)" : cell.mean.toFixed(3) + " \u00b1 " + cell.std.toFixed(3);
  }

  function fmtLift(lift) {
    return lift === null || lift === undefined ? "\u2013" : (lift >= 0 ? "+" : "") + lift.toFixed(3);
  }

  function meanStd(values) {
    if (!values.length) { return null; }
    var mean = values.reduce(function (a, b) { return a + b; }, 0) / values.length;
    var variance = values.reduce(function (a, b) { return a + (b - mean) * (b - mean); }, 0) / values.length;
    return { mean: mean, std: Math.sqrt(variance), n: values.length };
  }

  function fmtAdded(value, interval) {
    if (value === null || value === undefined) { return "\u2013"; }
    var text = fmtLift(value);
    return interval ? text + " [" + fmtLift(interval[1]) + ", " + fmtLift(interval[2]) + "]" : text;
  }

  // Incomplete tasks stay out of every mean, as in `genebench report`.
  function selectedTasks() {
    return data.tasks.filter(function (t) {
      return !t.incomplete && (!state.category || t.category === state.category) &&
        (!state.type || t.type === state.type) && !(state.flagged && t.shortcut);
    });
  }

  function visibleModels() {
    return data.models.filter(function (m) {
      return (!state.modality || m.modality === state.modality) && (!state.size || m.size === state.size);
    });
  }

  // A multi-label parent and its derived labels share one vote: their scores are averaged first, then the votes
  // (genebench.results.summarised_rows). n counts votes, tasks the scored tasks.
  function voteMean(scores, tasks, index) {
    var votes = {}, order = [], n = 0;
    tasks.forEach(function (t) {
      var s = scores[t.name];
      if (!s || s[index] === null || s[index] === undefined) { return; }
      var vote = t.parent || t.name;
      if (!votes[vote]) { votes[vote] = []; order.push(vote); }
      votes[vote].push(s[index]);
      n += 1;
    });
    var summary = meanStd(order.map(function (v) { return meanStd(votes[v]).mean; }));
    if (summary) { summary.tasks = n; }
    return summary;
  }

  function aggregate(model, tasks) {
    return voteMean(data.scores[model.key] || {}, tasks, 0);
  }

  function meanLift(model, tasks) {
    var summary = voteMean(data.scores[model.key] || {}, tasks, 2);
    return summary && summary.mean;
  }

  function familyScores(model) {
    return (data.family[model.key] || {}).scores || {};
  }

  // Understanding: added over names over the tasks whose name control stays below the shortcut line under family
  // folds, with its interval (a bootstrap over genes), computed for every view of the filters (site.py
  // understanding_views); [mean, low, high] or null.
  function understanding(model) {
    var views = (data.family[model.key] || {}).understanding || {};
    var view = views[state.category + "|" + state.type + "|" + (state.flagged ? "1" : "")];
    return view && view[0] !== null ? view : null;
  }

  function compare(a, b, desc) {
    var missingA = a === null || a === undefined, missingB = b === null || b === undefined;
    if (missingA || missingB) { return missingA === missingB ? 0 : (missingA ? 1 : -1); }
    var order = typeof a === "number" ? a - b : String(a).localeCompare(String(b));
    return desc ? -order : order;
  }

  function sortableHeader(row, col, label, sort, onSort) {
    var th = el("th", { "data-col": col, scope: "col", tabindex: "0" }, label);
    if (sort.col === col) { th.setAttribute("aria-sort", sort.desc ? "descending" : "ascending"); }
    th.addEventListener("click", function () { onSort(col); });
    row.appendChild(th);
  }

  function toggle(sort, col, defaultDesc) {
    if (sort.col === col) { sort.desc = !sort.desc; } else { sort.col = col; sort.desc = defaultDesc; }
  }

  // Only runs holding every task of one data revision are ranked; the others get a table of their own.
  function renderSummary(tasks, models) {
    var unranked = models.filter(function (m) { return !m.ranked; });
    fillSummary("summary-table", state.summarySort, tasks, models.filter(function (m) { return m.ranked; }), true);
    document.getElementById("unranked").hidden = !unranked.length;
    fillSummary("unranked-table", state.unrankedSort, tasks, unranked, false);
  }

  function tasksCell(row, tasks) {
    var filtered = tasks.length !== data.tasks.length;
    return (row.overall ? row.overall.tasks : 0) + " of " + (filtered ? tasks.length : row.model.n_expected);
  }

  function fillSummary(tableId, sort, tasks, models, ranked) {
    var categories = data.categories.filter(function (c) { return tasks.some(function (t) { return t.category === c; }); });
    var rows = models.map(function (m) {
      var family = familyScores(m);
      var row = { model: m, overall: aggregate(m, tasks), lift: meanLift(m, tasks), byCategory: {},
                  familyAuc: voteMean(family, tasks, 0), familyLift: (voteMean(family, tasks, 1) || {}).mean,
                  understanding: understanding(m) };
      categories.forEach(function (c) {
        row.byCategory[c] = aggregate(m, tasks.filter(function (t) { return t.category === c; }));
      });
      return row;
    });
    rows.slice().sort(function (a, b) { return compare(a.overall && a.overall.mean, b.overall && b.overall.mean, true); })
      .forEach(function (row, i) { row.rank = ranked && row.overall ? i + 1 : null; });
    var key = function (row) {
      if (sort.col === "rank") { return row.rank; }
      if (sort.col === "model") { return row.model.id + "@" + row.model.revision; }
      if (sort.col === "input") { return row.model.modality; }
      if (sort.col === "size") { return row.model.n_parameters; }
      if (sort.col === "overall") { return row.overall && row.overall.mean; }
      if (sort.col === "lift") { return row.lift; }
      if (sort.col === "family") { return row.familyAuc && row.familyAuc.mean; }
      if (sort.col === "familyLift") { return row.familyLift; }
      if (sort.col === "understanding") { return row.understanding && row.understanding[0]; }
      if (sort.col === "tasks") { return row.overall ? row.overall.tasks : 0; }
      if (sort.col === "coverage") { return row.model.coverage; }
      var cell = row.byCategory[sort.col.slice(4)];
      return cell && cell.mean;
    };
    rows.sort(function (a, b) { return compare(key(a), key(b), sort.desc) || compare(a.rank, b.rank, false); });

    var table = document.getElementById(tableId);
    table.textContent = "";
    var head = el("tr");
    var onSort = function (col) { toggle(sort, col, !["rank", "model", "input"].includes(col)); render(); };
    if (ranked) { sortableHeader(head, "rank", "Rank", sort, onSort); }
    sortableHeader(head, "model", "Model", sort, onSort);
    sortableHeader(head, "overall", "Overall", sort, onSort);
    sortableHeader(head, "lift", "Lift", sort, onSort);
    sortableHeader(head, "family", "Family AUC", sort, onSort);
    sortableHeader(head, "familyLift", "Family lift", sort, onSort);
    sortableHeader(head, "understanding", "Understanding", sort, onSort);
    sortableHeader(head, "tasks", "Tasks", sort, onSort);
    sortableHeader(head, "coverage", "Coverage", sort, onSort);
    categories.forEach(function (c) { sortableHeader(head, "cat:" + c, c, sort, onSort); });
    sortableHeader(head, "input", "Input", sort, onSort);
    sortableHeader(head, "size", "Size", sort, onSort);
    if (!ranked) { head.appendChild(el("th", { scope: "col" }, "Why not ranked")); }
    head.appendChild(el("th", { scope: "col" }, "Details"));
    table.appendChild(el("thead")).appendChild(head);
    var body = table.appendChild(el("tbody"));
    rows.forEach(function (row) {
      var m = row.model;
      var tr = el("tr", { "data-model": m.key });
      if (ranked) { tr.appendChild(el("td", { "data-col": "rank" }, row.rank === null ? "\u2013" : row.rank)); }
      var name = tr.appendChild(el("td", { "data-col": "model" }));
      name.appendChild(el("span", { class: "model-id" }, m.id));
      name.appendChild(el("span", { class: "muted revision", title: m.revision }, " @" + m.revision.slice(0, 12)));
      tr.appendChild(el("td", { "data-col": "overall", class: "overall" }, fmt(row.overall)));
      tr.appendChild(el("td", { "data-col": "lift" }, fmtLift(row.lift)));
      tr.appendChild(el("td", { "data-col": "family" }, fmt(row.familyAuc)));
      tr.appendChild(el("td", { "data-col": "familyLift" }, fmtLift(row.familyLift)));
      tr.appendChild(el("td", { "data-col": "understanding" },
        row.understanding ? fmtAdded(row.understanding[0], row.understanding) : "\u2013"));
      tr.appendChild(el("td", { "data-col": "tasks" }, tasksCell(row, tasks)));
      tr.appendChild(el("td", { "data-col": "coverage" }, (100 * m.coverage).toFixed(1) + "%"));
      categories.forEach(function (c) { tr.appendChild(el("td", { "data-col": "cat:" + c }, fmt(row.byCategory[c]))); });
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
        var score = (data.scores[sort.col.slice(6)] || {})[t.name];
        return score ? score[0] : null;
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
      sortableHeader(head, "genes", "Genes", sort, onSort);
      models.forEach(function (m) { sortableHeader(head, "model:" + m.key, m.id, sort, onSort); });
      table.appendChild(el("thead")).appendChild(head);
      var body = table.appendChild(el("tbody"));
      rows.forEach(function (t) {
        var tr = body.appendChild(el("tr", { "data-task": t.name }));
        var name = tr.appendChild(el("td", { "data-col": "task" }, t.name));
        if (t.shortcut) {
          name.appendChild(el("span", { class: "shortcut", title: "shortcut-solvable: the " + t.best_control.name +
            " control reaches AUC " + t.best_control.score.toFixed(3) }, " \u2691 " + t.best_control.name + " " +
            t.best_control.score.toFixed(3)));
        }
        tr.appendChild(el("td", { "data-col": "type" }, t.type));
        tr.appendChild(el("td", { "data-col": "genes" }, t.n_entities));
        models.forEach(function (m) {
          var score = (data.scores[m.key] || {})[t.name], family = familyScores(m)[t.name];
          var text = score ? fmt({ mean: score[0], std: score[1] }) + " (" + fmtLift(score[2]) + ")" : "\u2013";
          if (family) {
            text += "; family " + family[0].toFixed(3) + " (" + fmtLift(family[1]) + "), added " +
              fmtAdded(family[2], family[2] === null ? null : family);
          }
          tr.appendChild(el("td", { "data-col": "model:" + m.key }, text));
        });
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

  function render() {
    var tasks = selectedTasks(), models = visibleModels();
    renderSummary(tasks, models);
    renderTaskTables(tasks, models);
    document.getElementById("filter-status").textContent =
      models.length + " of " + data.models.length + " models, " + tasks.length + " of " + data.tasks.length + " tasks";
  }

  function setupFilters() {
    var choices = {
      category: data.categories.map(function (c) { return [c, c]; }),
      type: data.task_types.map(function (t) { return [t, t]; }),
      modality: data.modalities.map(function (m) { return [m, m]; }),
      size: data.sizes.map(function (s) { return [s.key, s.label]; })
    };
    FILTERS.forEach(function (name) {
      var select = document.getElementById("filter-" + name);
      choices[name].forEach(function (choice) { select.appendChild(el("option", { value: choice[0] }, choice[1])); });
      select.addEventListener("change", function () { state[name] = select.value; render(); });
    });
    var flagged = document.getElementById("filter-flagged");
    flagged.addEventListener("change", function () { state.flagged = flagged.checked; render(); });
    document.getElementById("filter-reset").addEventListener("click", function () {
      FILTERS.forEach(function (name) { state[name] = ""; document.getElementById("filter-" + name).value = ""; });
      state.flagged = false;
      flagged.checked = false;
      render();
    });
  }

  document.getElementById("provenance").textContent =
    "Generated " + data.generated + " from " + data.models.length + " model runs; data revision " +
    data.data_revisions.join(", ") + ". Ranked: runs holding every task of the data revision.";
  setupFilters();
  renderFigures();
  render();
}());
