// The play page: draws what the server sends (azjax/play/web.py) and forwards clicks to it.
// All game logic lives on the server; this file only renders state and sequences requests.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let busy = false; // A request is in flight: clicks wait for it rather than racing it.

async function api(method, path, body) {
  const options = { method, headers: {} };
  if (method === "POST") {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body || {});
  }
  const reply = await fetch(path, options);
  const data = await reply.json();
  if (!reply.ok) throw new Error(data.error || `HTTP ${reply.status}`);
  return data;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function fillSelect(select, values, chosen, titles) {
  if (!values.includes(chosen)) values = values.concat([chosen]); // e.g. "mcts:400" from the CLI
  select.replaceChildren(...values.map((v) => {
    const option = document.createElement("option");
    option.value = v;
    option.textContent = v === "" ? "default (trained agent, else mcts)" : v.replace(/_/g, " ");
    if (titles && titles[v]) option.title = titles[v]; // The kind's one line, on hover.
    option.selected = v === chosen;
    return option;
  }));
}

function showSettings(s) {
  fillSelect($("game"), s.options.games, s.settings.game);
  fillSelect($("opponent"), s.options.opponents, s.settings.opponent, s.options.descriptions);
  $("color").value = s.settings.color;
  // The sides by their names in this game: "first (red)", "second (black)".
  $("color").querySelector('[value="white"]').textContent = `first (${s.sides[0]})`;
  $("color").querySelector('[value="black"]').textContent = `second (${s.sides[1]})`;
  $("sims").value = s.settings.sims || "";
  showSimsDefault();
}

// What an empty "Simulations" field means for the opponent chosen in the form: the kind's
// default number ("default 64"), the number in a spec like "mcts:400", or nothing for a kind
// that does not search (the field is then off).
function showSimsDefault() {
  if (!state) return;
  const options = state.options;
  const chosen = $("opponent").value;
  const [kind, number] = (chosen || options.default_opponents[$("game").value] || "").split(":");
  const field = $("sims");
  const searches = kind in options.sims_defaults;
  field.disabled = !searches;
  field.placeholder = !searches ? `not used by ${kind || "this opponent"}` :
    number ? `${number} (from ${chosen})` : `default ${options.sims_defaults[kind]}`;
  field.title = searches ? `${kind}: ${field.placeholder}` : "";
}

function percent(x) {
  return `${Math.round(100 * x)}%`;
}

function signed(x) {
  return (x >= 0 ? "+" : "") + x.toFixed(2);
}

function showAnalysis(s) {
  const a = s.analysis;
  const body = $("top").querySelector("tbody");
  const chance = a && a.chance_first !== null ? a.chance_first : 0.5;
  $("bar-fill").style.width = percent(chance);
  document.querySelector(".bar").hidden = !a || a.chance_first === null;
  $("top").hidden = !a || a.top.length === 0;
  $("bar-labels").textContent = a && a.chance_first !== null ?
    `${s.sides[0]} ${percent(chance)} · ${s.sides[1]} ${percent(1 - chance)}` : "";
  if (!a) {
    $("eval-text").textContent = "The agent has not moved yet.";
    body.replaceChildren();
    return;
  }
  const headers = ["move", a.top.length && a.top[0].share !== null ? a.share_label : "",
    a.value_kind === "score" ? "score" : "value"];
  $("top").querySelectorAll("th").forEach((th, i) => { th.textContent = headers[i]; });
  $("eval-text").textContent = `${a.player} played ${a.move}` +
    (a.value_text ? `: ${a.value_text}.` : ".") +
    ` (${a.method}, ${a.seconds.toFixed(2)} s)` +
    (a.pv && a.pv.length ? ` Principal variation: ${a.pv.join(" ")}.` : "");
  body.replaceChildren(...a.top.map((t) => {
    const row = document.createElement("tr");
    if (t.move === a.move) row.className = "played";
    const value = t.value === null ? "" :
      (a.value_kind === "value" ? signed(t.value) : t.value.toFixed(2));
    for (const [text, cls] of [[t.move, ""], [t.share === null ? "" : percent(t.share), "num"],
      [value, "num"]]) {
      const cell = document.createElement("td");
      cell.textContent = text;
      if (cls) cell.className = cls;
      row.appendChild(cell);
    }
    return row;
  }));
}

function showMoves(moves) {
  const items = [];
  for (let i = 0; i < moves.length; i += 2) {
    const li = document.createElement("li");
    li.textContent = moves.slice(i, i + 2).join(" ");
    items.push(li);
  }
  $("moves").replaceChildren(...items);
}

function render(s) {
  state = s;
  $("title").textContent = s.title;
  $("players").textContent = s.players.join("  vs  ");
  $("board").innerHTML = s.svg; // Our own server's SVG (azjax.play.render.to_svg, no scripts).
  $("status").textContent = s.status;
  $("status").classList.remove("thinking");
  $("message").textContent = s.message;
  $("message").className = s.message_kind === "error" ? "error" : "";
  $("special").replaceChildren(...s.special_moves.map((m) => {
    const button = Object.assign(document.createElement("button"),
      { type: "button", textContent: m.label, title: `play ${m.move}` });
    button.dataset.move = m.move;
    button.addEventListener("click", () => act("/api/move", { move: m.move }));
    return button;
  }));
  $("hint").disabled = !s.human_to_move;
  $("undo").disabled = !s.can_undo;
  $("resign").disabled = s.over || s.humans === 0;
  $("move-input").disabled = !s.human_to_move;
  $("move-input").placeholder = `or type a move, e.g. ${s.example}`;
  $("rules").textContent = s.rules;
  $("legend").textContent = s.legend ? `Pieces: ${s.legend}.` : "";
  $("notes").replaceChildren(...s.notes.concat(s.saved ? [`record saved to ${s.saved}`] : [])
    .map((n) => Object.assign(document.createElement("li"), { textContent: n })));
  showAnalysis(s);
  showMoves(s.moves);
  // For tests and scripts: how many replies were drawn, and whether the game is over.
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
  document.body.dataset.over = String(s.over);
  document.body.dataset.toMove = s.over ? "" : s.to_move;
}

// Lets the engines move while it is their turn (one request per move, so the page shows each
// move, its evaluation and the "thinking" line as they come).
async function runAgents() {
  while (state && state.agent_to_move) {
    $("status").textContent = state.thinking;
    $("status").classList.add("thinking");
    document.body.classList.add("busy");
    const watching = state.humans === 0;
    render(await api("POST", "/api/agent"));
    document.body.classList.remove("busy");
    if (watching) await sleep(500);
  }
}

function showError(err) {
  document.body.classList.remove("busy");
  $("message").textContent = `server error: ${err.message || err}`;
  $("message").className = "error";
}

// Runs one request that may change the position, then the engines' replies.
function setBusy(value) {
  busy = value;
  document.body.dataset.busy = String(value); // For tests: wait until the page is idle.
}

// One request at a time: sends it, shows the position it returns (and the settings it was
// played with, for a new game or the page's first load), then lets the engines move.
async function act(path, body, { method = "POST", settings = false } = {}) {
  if (busy) return;
  setBusy(true);
  try {
    const s = await api(method, path, body);
    render(s);
    if (settings) showSettings(s);
    await runAgents();
  } catch (err) {
    showError(err);
  } finally {
    setBusy(false);
  }
}

$("board").addEventListener("click", (event) => {
  const square = event.target.closest("[data-square]");
  if (!square) return;
  act("/api/click", { square: square.dataset.square });
});

$("typed").addEventListener("submit", (event) => {
  event.preventDefault();
  const move = $("move-input").value;
  $("move-input").value = "";
  act("/api/move", { move });
});

$("undo").addEventListener("click", () => act("/api/undo"));
$("hint").addEventListener("click", () => {
  if (busy) return;
  $("status").textContent = "asking the agent for a hint";
  $("status").classList.add("thinking");
  act("/api/hint");
});
$("resign").addEventListener("click", () => act("/api/resign"));

$("settings").addEventListener("submit", (event) => {
  event.preventDefault();
  const body = {
    game: $("game").value,
    opponent: $("opponent").value,
    color: $("color").value,
    sims: $("sims").value,
  };
  act("/api/new", body, { settings: true });
});

// When the game changes, offer its default opponent again (the trained agent, if any).
$("game").addEventListener("change", () => { $("opponent").value = ""; showSimsDefault(); });
$("opponent").addEventListener("change", showSimsDefault);

act("/api/state", undefined, { method: "GET", settings: true });
