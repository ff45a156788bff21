// picture.js drives the picture-password pages (login and enrollment).
//
// A click on the picture becomes a canonical point: x in 0..999, y in 0..749,
// measured against the image's bounding rectangle at the time of the click.
// Points are sent as "x1,y1;x2,y2;..." in hidden inputs, which are only filled
// in when the form is submitted. The page shows how many points were clicked,
// never where.
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

  function serialize(points) {
    return points.map(function (p) { return p.x + ',' + p.y; }).join(';');
  }

  function countText(n, total) {
    return n + ' of ' + total + ' points';
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

  function initLogin(form) {
    var n = intAttr(form, 'data-points', 5, 1, 32);
    var picture = byId('picture');
    var count = byId('count');
    var startOver = byId('start-over');
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
    }

    function reset() {
      points = [];
      submitting = false;
      field.value = '';
      startOver.disabled = false;
      notice.clear();
      update();
    }

    guardPicture(picture);

    picture.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (submitting) {
        return;
      }
      if (!imageReady(picture)) {
        notice.set('Please wait until your picture has loaded.', 'error');
        return;
      }
      if (points.length >= n) {
        notice.set('You have clicked all ' + n + ' points. Press Continue, or Start over.', 'info');
        feedback.reject();
        return;
      }
      var p = canonical(picture, ev);
      if (!p) {
        return;
      }
      points.push(p);
      feedback.ok();
      if (points.length === n) {
        notice.set('All points clicked. Press Continue.', 'info');
      } else {
        notice.clear();
      }
      update();
    });

    picture.addEventListener('error', function () {
      notice.set('Your picture could not be loaded. Please reload the page.', 'error');
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
      submit.disabled = true;
      startOver.disabled = true;
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
    }

    function show(s) {
      step = s;
      stepChoose.hidden = s !== 1;
      stepPoints.hidden = s !== 2;
      stepConfirm.hidden = s !== 3;
      workspace.hidden = s === 1;
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
      notice.clear();
      show(1);
      updateChoice();
    }

    function toStep2() {
      clearPoints();
      show(2);
    }

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
      picture.alt = title ? 'Your picture: ' + title : 'Your picture';
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

    guardPicture(picture);

    picture.addEventListener('error', function () {
      if (step !== 1) {
        notice.set('This picture could not be loaded. Choose another picture.', 'error');
      }
    });

    picture.addEventListener('click', function (ev) {
      ev.preventDefault();
      if (submitting || step === 1) {
        return;
      }
      if (!imageReady(picture)) {
        notice.set('Please wait until the picture has loaded.', 'error');
        return;
      }
      var p = canonical(picture, ev);
      if (!p) {
        return;
      }
      if (step === 2) {
        if (first.length >= n) {
          return;
        }
        if (tooClose(p)) {
          feedback.reject();
          notice.set('That is too close to a point you already chose. Pick another detail.', 'error');
          return;
        }
        first.push(p);
        feedback.ok();
        if (first.length === n) {
          show(3);
          notice.set('Now click the same ' + n + ' points again, in the same order.', 'info');
          focusHeading(stepConfirm, false);
        } else {
          notice.clear();
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
        notice.set('That was not the same point. Start over.', 'error');
        focusHeading(stepPoints, false);
        return;
      }
      second.push(p);
      feedback.ok();
      if (second.length === n) {
        notice.set('Your points match. Press \u201cSave my picture password\u201d.', 'info');
      } else {
        notice.clear();
      }
      update();
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
      submit.disabled = true;
      startOver.disabled = true;
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
