// picture.js drives the picture-password pages (login and enrollment).
//
// A click on the picture becomes a canonical point: x in 0..999, y in 0..749,
// measured against the image's bounding rectangle at the time of the click.
// With a keyboard, the picture takes focus: the arrow keys move a cross (Shift
// for bigger steps), Enter or Space places a point at the cross, and Backspace
// removes the last point; the cross is in canonical units, so a point placed
// with it is the same whole numbers a click gives. On a touch screen a tap
// shows a ring where it landed and counts only once the person confirms it.
// Points are sent as "x1,y1;x2,y2;..." in hidden inputs, which are only filled
// in when the form is submitted. The page shows how many points were placed,
// never where (the ring of a tap waiting for its confirmation aside).
// Every sentence the script shows comes from the page's JSON block
// #picture-text, so that the page says it in the page's language.
(function () {
  'use strict';

  var WIDTH = 1000;
  var HEIGHT = 750;

  function byId(id) {
    return document.getElementById(id);
  }

  // intAttr reads a whole number from a data attribute of el, falling back to
  // def when it is missing or outside min..max.
  function intAttr(el, name, def, min, max) {
    var v = parseInt(el.getAttribute(name) || '', 10);
    if (!Number.isFinite(v) || v < min || v > max) {
      return def;
    }
    return v;
  }

  function clamp(v, lo, hi) {
    return Math.min(hi, Math.max(lo, v));
  }

  // canonical converts a click on img into canonical coordinates, or returns
  // null when the image has no size (not laid out yet).
  function canonical(img, ev) {
    var rect = img.getBoundingClientRect();
    if (!(rect.width > 0) || !(rect.height > 0)) {
      return null;
    }
    var x = Math.floor((ev.clientX - rect.left) / rect.width * WIDTH);
    var y = Math.floor((ev.clientY - rect.top) / rect.height * HEIGHT);
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      return null;
    }
    return { x: clamp(x, 0, WIDTH - 1), y: clamp(y, 0, HEIGHT - 1) };
  }

  // texts are the page's sentences (#picture-text), in the page's language: a
  // sentence that depends on a number is an object of its plural forms.
  var texts = {};
  var plurals = null;

  // pluralForm is the plural category (one, other, ...) of n in the page's
  // language, as the server chose the language (<html lang>).
  function pluralForm(n) {
    if (!plurals) {
      try {
        plurals = new Intl.PluralRules(document.documentElement.lang || 'en');
      } catch (e) {
        plurals = { select: function (k) { return k === 1 ? 'one' : 'other'; } };
      }
    }
    return plurals.select(n);
  }

  // say returns the sentence key with {name} replaced by vars.name; a plural
  // sentence takes the form of vars.n.
  function say(key, vars) {
    var t = texts[key];
    if (t && typeof t === 'object') {
      var n = vars && typeof vars.n === 'number' ? vars.n : 0;
      t = t[pluralForm(n)] || t.other;
    }
    t = typeof t === 'string' ? t : '';
    return t.replace(/\{(\w+)\}/g, function (m, name) {
      return vars && name in vars ? String(vars[name]) : m;
    });
  }

  function serialize(points) {
    return points.map(function (p) { return p.x + ',' + p.y; }).join(';');
  }

  function countText(n, total) {
    return say('count', { placed: n, n: total });
  }

  // imageReady reports whether img has loaded, so that a click lands on the
  // picture the user actually sees.
  function imageReady(img) {
    return img.complete && img.naturalWidth > 0;
  }

  // Feedback shows that a click was taken (or refused) by flashing the border
  // of the whole picture, which tells nothing about where the click was.
  function Feedback(frame) {
    var timer = 0;
    function flash(cls) {
      frame.classList.remove('pulse', 'reject');
      void frame.offsetWidth; // restart the animation
      frame.classList.add(cls);
      clearTimeout(timer);
      timer = setTimeout(function () {
        frame.classList.remove(cls);
      }, 400);
    }
    return {
      ok: function () { flash('pulse'); },
      reject: function () { flash('reject'); }
    };
  }

  function Notice(el) {
    return {
      set: function (text, kind) {
        el.textContent = text || '';
        el.classList.toggle('error', !!text && kind === 'error');
        el.classList.toggle('info', !!text && kind !== 'error');
      },
      clear: function () {
        el.textContent = '';
        el.classList.remove('error', 'info');
      }
    };
  }

  // guardPicture stops the browser from dragging the picture or opening its
  // context menu on a long press, which would get in the way of clicking.
  function guardPicture(img) {
    img.addEventListener('dragstart', function (ev) { ev.preventDefault(); });
    img.addEventListener('contextmenu', function (ev) { ev.preventDefault(); });
  }


  // setUndo enables or disables the Undo last point button; when it is
  // disabled while it has the focus (its last point was undone), the focus
  // goes to the picture, where the next point is placed.
  function setUndo(btn, frame, disabled) {
    if (disabled && document.activeElement === btn) {
      frame.focus();
    }
    btn.disabled = disabled;
  }

  // Keyboard steps of the cross, in canonical units: about 1% of the width,
  // and 5% with Shift.
  var STEP = 10;
  var BIG_STEP = 50;

  // place positions el (a marker) at canonical point p, in percent of the
  // picture, so that it stays put when the picture is resized.
  function place(el, p) {
    el.style.left = ((p.x + 0.5) / WIDTH * 100) + '%';
    el.style.top = ((p.y + 0.5) / HEIGHT * 100) + '%';
  }

  // Placer turns what a person does on the picture into points: clicks,
  // taps (confirmed first) and the keyboard. opts.active() says whether
  // points may be placed now; opts.add(p, how) takes a point (how is
  // 'pointer', 'touch' or 'keyboard') and opts.undo(how) removes the last.
  function Placer(frame, picture, notice, opts) {
    var cursorEl = byId('cursor');
    var pendingEl = byId('pending');
    var confirmBox = byId('tap-confirm');
    var useBtn = byId('use-point');
    var retryBtn = byId('retry-point');
    var cursor = { x: WIDTH / 2, y: HEIGHT / 2 };
    var pending = null;
    var lastPointer = 'mouse';

    function clearPending() {
      pending = null;
      if (pendingEl) {
        pendingEl.hidden = true;
      }
      if (confirmBox) {
        confirmBox.hidden = true;
      }
    }

    function showCursor() {
      if (cursorEl) {
        place(cursorEl, cursor);
      }
    }

    frame.addEventListener('pointerdown', function (ev) {
      lastPointer = ev.pointerType || 'mouse';
    });

    picture.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (!opts.active()) {
        return;
      }
      if (!imageReady(picture)) {
        notice.set(say('wait'), 'error');
        return;
      }
      var p = canonical(picture, ev);
      if (!p) {
        return;
      }
      var how = (ev.pointerType || lastPointer) === 'touch' ? 'touch' : 'pointer';
      if (how === 'touch' && pendingEl && confirmBox) {
        pending = p;
        place(pendingEl, p);
        pendingEl.hidden = false;
        confirmBox.hidden = false;
        notice.set(say('checkRing'), 'info');
        return;
      }
      clearPending();
      opts.add(p, how);
    });

    if (useBtn) {
      useBtn.addEventListener('click', function () {
        var p = pending;
        clearPending();
        if (p && opts.active()) {
          opts.add(p, 'touch');
        }
      });
    }
    if (retryBtn) {
      retryBtn.addEventListener('click', function () {
        clearPending();
        notice.set(say('tapAgain'), 'info');
      });
    }

    frame.addEventListener('focus', showCursor);

    // The focus moves on (to the button that sends the form) when the key
    // that placed the last point is released, not while it is down: the
    // rest of that key press must not reach the button and press it.
    var focusNext = null;
    frame.addEventListener('keyup', function () {
      var el = focusNext;
      focusNext = null;
      if (el) {
        el.focus();
      }
    });

    frame.addEventListener('keydown', function (ev) {
      if (ev.altKey || ev.ctrlKey || ev.metaKey) {
        return;
      }
      var step = ev.shiftKey ? BIG_STEP : STEP;
      var dx = 0;
      var dy = 0;
      switch (ev.key) {
        case 'ArrowLeft': dx = -step; break;
        case 'ArrowRight': dx = step; break;
        case 'ArrowUp': dy = -step; break;
        case 'ArrowDown': dy = step; break;
        case 'Enter':
        case ' ':
        case 'Spacebar':
          ev.preventDefault();
          if (!opts.active()) {
            return;
          }
          if (!imageReady(picture)) {
            notice.set(say('wait'), 'error');
            return;
          }
          clearPending();
          opts.add({ x: cursor.x, y: cursor.y }, 'keyboard');
          return;
        case 'Backspace':
        case 'Delete':
          ev.preventDefault();
          clearPending();
          if (opts.active()) {
            opts.undo('keyboard');
          }
          return;
        default:
          return;
      }
      ev.preventDefault();
      cursor.x = clamp(cursor.x + dx, 0, WIDTH - 1);
      cursor.y = clamp(cursor.y + dy, 0, HEIGHT - 1);
      showCursor();
    });

    showCursor();
    return {
      // reset puts the cross back in the middle and drops a tap waiting for
      // its confirmation.
      reset: function () {
        cursor = { x: WIDTH / 2, y: HEIGHT / 2 };
        showCursor();
        clearPending();
      },
      clearPending: clearPending,
      // undo removes the last point, as Backspace does.
      undo: function () {
        opts.undo('button');
      },
      // focusAfterKey gives el the focus once the key being pressed is up.
      focusAfterKey: function (el) {
        focusNext = el;
      }
    };
  }

  function initLogin(form) {
    var n = intAttr(form, 'data-points', 5, 1, 32);
    var picture = byId('picture');
    var count = byId('count');
    var startOver = byId('start-over');
    var undoBtn = byId('undo');
    var submit = byId('submit');
    var field = form.querySelector('input[name="points"]');
    var frame = byId('frame') || picture.parentElement;
    var notice = Notice(byId('notice') || document.createElement('p'));
    var feedback = Feedback(frame);
    var points = [];
    var submitting = false;

    function update() {
      count.textContent = countText(points.length, n);
      submit.disabled = submitting || points.length !== n;
      setUndo(undoBtn, frame, submitting || points.length === 0);
    }

    function reset() {
      points = [];
      submitting = false;
      field.value = '';
      startOver.disabled = false;
      notice.clear();
      if (placer) {
        placer.reset();
      }
      update();
    }

    var placer = null;
    guardPicture(picture);

    placer = Placer(frame, picture, notice, {
      active: function () { return !submitting; },
      add: function (p, how) {
        if (points.length >= n) {
          notice.set(say('allPlaced', { n: n }), 'info');
          feedback.reject();
          return;
        }
        points.push(p);
        feedback.ok();
        update();
        if (points.length === n) {
          notice.set(say('loginReady'), 'info');
          if (how === 'keyboard') {
            placer.focusAfterKey(submit);
          }
        } else if (how === 'keyboard') {
          notice.set(say('placed', { number: points.length }), 'info');
        } else {
          notice.clear();
        }
      },
      undo: function () {
        if (points.length === 0) {
          notice.set(say('noPoint'), 'info');
          return;
        }
        points.pop();
        update();
        notice.set(say('removed'), 'info');
      }
    });

    picture.addEventListener('error', function () {
      notice.set(say('loginImageFailed'), 'error');
    });

    undoBtn.addEventListener('click', function () {
      if (!submitting) {
        placer.clearPending();
        placer.undo();
      }
    });

    startOver.addEventListener('click', function () {
      if (!submitting) {
        reset();
      }
    });

    form.addEventListener('submit', function (ev) {
      if (submitting || points.length !== n) {
        ev.preventDefault();
        return;
      }
      field.value = serialize(points);
      submitting = true;
      placer.clearPending();
      submit.disabled = true;
      startOver.disabled = true;
      undoBtn.disabled = true;
    });

    // A page restored from the back/forward cache starts over.
    window.addEventListener('pageshow', function (ev) {
      if (ev.persisted) {
        reset();
      }
    });

    reset();
  }

  function initEnroll(form) {
    var n = intAttr(form, 'data-points', 5, 1, 32);
    var r = intAttr(form, 'data-tolerance', 20, 0, 749);
    var far = 3 * r + 1; // first-step points must be farther apart than this
    var radios = Array.prototype.slice.call(form.querySelectorAll('input[type="radio"][name="image"]'));
    var choose = byId('choose');
    var stepChoose = byId('step-choose');
    var stepPoints = byId('step-points');
    var stepConfirm = byId('step-confirm');
    var workspace = byId('workspace');
    var picture = byId('picture');
    var count = byId('count');
    var startOver = byId('start-over');
    var undoBtn = byId('undo');
    var back = byId('back');
    var submit = byId('submit');
    var pointsField = form.querySelector('input[name="points"]');
    var confirmField = form.querySelector('input[name="confirm"]');
    var frame = byId('frame') || picture.parentElement;
    var notice = Notice(byId('notice'));
    var feedback = Feedback(frame);

    var step = 1;
    var chosen = ''; // name of the image used in steps 2 and 3
    var first = [];
    var second = [];
    var submitting = false;

    function checkedRadio() {
      for (var i = 0; i < radios.length; i++) {
        if (radios[i].checked) {
          return radios[i];
        }
      }
      return null;
    }

    function updateChoice() {
      var sel = checkedRadio();
      choose.disabled = !sel;
      radios.forEach(function (radio) {
        var label = radio.closest('label');
        if (label) {
          label.classList.toggle('is-selected', radio.checked);
        }
      });
    }

    function update() {
      count.textContent = countText(step === 3 ? second.length : first.length, n);
      submit.disabled = submitting || step !== 3 || first.length !== n || second.length !== n;
      setUndo(undoBtn, frame, submitting || (step === 3 ? second : first).length === 0);
    }

    function show(s) {
      step = s;
      stepChoose.hidden = s !== 1;
      stepPoints.hidden = s !== 2;
      stepConfirm.hidden = s !== 3;
      workspace.hidden = s === 1;
      frame.setAttribute('aria-describedby', (s === 3 ? 'confirm-instructions' : 'points-instructions') + ' keyboard-help');
      update();
    }

    function clearPoints() {
      first = [];
      second = [];
      pointsField.value = '';
      confirmField.value = '';
    }

    function focusHeading(section, scroll) {
      var h = section.querySelector('h2');
      if (h) {
        h.focus({ preventScroll: !scroll });
      }
    }

    function tooClose(p) {
      return first.some(function (q) {
        return Math.abs(p.x - q.x) <= far && Math.abs(p.y - q.y) <= far;
      });
    }

    function same(p, q) {
      return Math.abs(p.x - q.x) <= r && Math.abs(p.y - q.y) <= r;
    }

    function toStep1() {
      clearPoints();
      if (placer) {
        placer.clearPending();
      }
      notice.clear();
      show(1);
      updateChoice();
    }

    function toStep2() {
      clearPoints();
      if (placer) {
        placer.reset();
      }
      show(2);
    }

    var placer = null;

    radios.forEach(function (radio) {
      radio.addEventListener('change', updateChoice);
    });

    choose.addEventListener('click', function () {
      var sel = checkedRadio();
      if (!sel || submitting) {
        return;
      }
      var url = sel.getAttribute('data-url') || '';
      var title = sel.getAttribute('data-title') || '';
      if (chosen !== sel.value || picture.getAttribute('src') !== url) {
        picture.src = url;
      }
      chosen = sel.value;
      picture.alt = title ? say('pictureAlt', { title: title }) : say('pictureAltUntitled');
      notice.clear();
      toStep2();
      focusHeading(stepPoints, true);
    });

    back.addEventListener('click', function () {
      if (submitting) {
        return;
      }
      toStep1();
      var sel = checkedRadio();
      if (sel) {
        sel.focus();
      } else {
        focusHeading(stepChoose, true);
      }
    });

    startOver.addEventListener('click', function () {
      if (submitting) {
        return;
      }
      notice.clear();
      toStep2();
    });

    undoBtn.addEventListener('click', function () {
      if (!submitting && step !== 1) {
        placer.clearPending();
        placer.undo();
      }
    });

    guardPicture(picture);

    picture.addEventListener('error', function () {
      if (step !== 1) {
        notice.set(say('enrollImageFailed'), 'error');
      }
    });

    placer = Placer(frame, picture, notice, {
      active: function () { return !submitting && step !== 1; },
      add: function (p, how) {
        var keyboard = how === 'keyboard';
        if (step === 2) {
          if (first.length >= n) {
            return;
          }
          if (tooClose(p)) {
            feedback.reject();
            notice.set(say('tooClose'), 'error');
            return;
          }
          first.push(p);
          feedback.ok();
          if (first.length === n) {
            show(3);
            notice.set(say('confirmNow', { n: n }), 'info');
            if (!keyboard) {
              focusHeading(stepConfirm, false);
            }
          } else {
            notice.set(keyboard ? say('placed', { number: first.length }) : '', 'info');
            update();
          }
          return;
        }
        // step 3
        if (second.length >= n) {
          return;
        }
        if (!same(p, first[second.length])) {
          feedback.reject();
          toStep2();
          notice.set(say('mismatch'), 'error');
          if (!keyboard) {
            focusHeading(stepPoints, false);
          }
          return;
        }
        second.push(p);
        feedback.ok();
        if (second.length === n) {
          notice.set(say('match'), 'info');
          update();
          if (keyboard) {
            placer.focusAfterKey(submit);
          }
        } else {
          notice.set(keyboard ? say('placed', { number: second.length }) : '', 'info');
          update();
        }
      },
      undo: function () {
        var list = step === 3 ? second : first;
        if (list.length === 0) {
          notice.set(say('noPoint'), 'info');
          return;
        }
        list.pop();
        notice.set(say('removed'), 'info');
        update();
      }
    });

    form.addEventListener('submit', function (ev) {
      var sel = checkedRadio();
      if (submitting || step !== 3 || first.length !== n || second.length !== n ||
          !sel || sel.value !== chosen) {
        ev.preventDefault();
        return;
      }
      pointsField.value = serialize(first);
      confirmField.value = serialize(second);
      submitting = true;
      placer.clearPending();
      submit.disabled = true;
      startOver.disabled = true;
      undoBtn.disabled = true;
      back.disabled = true;
    });

    // A page restored from the back/forward cache starts over at step 1,
    // keeping the chosen picture selected.
    window.addEventListener('pageshow', function (ev) {
      if (ev.persisted) {
        submitting = false;
        startOver.disabled = false;
        back.disabled = false;
        toStep1();
      }
    });

    toStep1();
  }

  function init() {
    var data = byId('picture-text');
    try {
      texts = data ? JSON.parse(data.textContent) || {} : {};
    } catch (e) {
      texts = {};
    }
    var login = byId('login-form');
    if (login) {
      initLogin(login);
      return;
    }
    var enroll = byId('enroll-form');
    if (enroll) {
      initEnroll(enroll);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
