// actions/scheduler.js: what the scheduler does and runs with: pause,
// resume, step, its plugins and its configuration (loaded, checked as it is
// typed, applied).

import { describeError } from '../net/api.js';
import { configWithPlugins, withPluginArgs } from '../schedconfig.js';

/** schedulerActions are the scheduler actions; see actions/index.js for ctx. */
export function schedulerActions({ api, store, run, actions }) {
  // The configuration check under way, which a newer one cancels.
  let checking = null;

  return {
    async pause() { return run('scheduler', 'Could not pause the scheduler', () => api.pause()); },
    async resume() { return run('scheduler', 'Could not resume the scheduler', () => api.resume()); },
    /** Schedules one pod; when its cycle ends the page says where it went, and the inspector follows it. */
    async step() {
      // A step granted with nothing to take would fire later, on whatever
      // pod comes next: say why nothing happens instead.
      const waiting = store.queue.lane('active').peek().length + store.queue.lane('backoff').peek().length;
      if (!waiting) {
        store.addNotice('info', 'Nothing to step: no pod waits in activeQ or backoffQ.');
        return undefined;
      }
      store.watchStep();
      return run('scheduler', 'Could not step the scheduler', () => api.step());
    },

    async togglePause() {
      const s = store.schedulerShown.peek();
      if (!s.live) return undefined;
      return s.state === 'paused' ? actions.resume() : actions.pause();
    },

    /** Loads what the running scheduler's plugins are (GET /scheduler/plugins) into the store. */

    /** Loads one profile's plugins (GET /scheduler/plugins?profile=; the one shown, else the first) into the store. */
    async loadPluginView(profile) {
      return run('pluginView', 'Could not load the scheduler\'s plugins', async () => {
        // The profile shown before; the first, once the scheduler no
        // longer has it (404).
        const wanted = profile ?? store.server.plugins.peek()?.profile;
        const view = await api.plugins(wanted).catch((err) => {
          if (err?.status === 404 && profile === undefined) return api.plugins();
          throw err;
        });
        store.setPlugins(view);
        return view;
      });
    },

    /** Loads the running configuration (JSON) for the plugin editor. */
    async loadConfig() {
      return run('plugins', 'Could not load the scheduler\'s configuration', () => api.config());
    },

    /**
     * Applies plugin edits ({Name: {enabled, weight}}) to one profile of
     * config; returns the configuration the scheduler restarted with.
     */
    async applyPlugins(config, edits, profile) {
      return run('plugins', 'The scheduler refused the configuration', async () => {
        const next = configWithPlugins(config, edits, profile);
        const cfg = await api.putConfig(next);
        store.addNotice('ok', 'The scheduler restarted with the new plugins.');
        await actions.loadPluginView(profile);
        return cfg;
      });
    },

    /** Sends a whole configuration typed by hand (YAML or JSON); true when the scheduler restarted with it. */
    async applyConfigText(text) {
      return run('config', 'The scheduler refused the configuration', async () => {
        await api.putConfig(text, 'application/yaml');
        store.addNotice('ok', 'The scheduler restarted with the new configuration.');
        return true;
      });
    },

    /** The running configuration and the defaults, as YAML: {running, defaults}. */
    async loadConfigYaml() {
      return run('config', 'Could not load the configuration', async () => {
        const [running, defaults] = await Promise.all([api.configYaml(), api.configYaml(true)]);
        return { running, defaults };
      });
    },

    /**
     * Checks a configuration as it is typed (the server's dry run):
     * {ok: true} or {ok: false, message, line}; null when a newer check
     * replaced this one.
     */
    async checkConfig(text) {
      checking?.abort();
      const mine = new AbortController();
      checking = mine;
      try {
        await api.checkConfig(text, mine.signal);
        return { ok: true, message: '', line: null };
      } catch (err) {
        if (err?.name === 'AbortError') return null;
        return { ok: false, message: describeError(err), line: err?.line ?? null };
      } finally {
        if (checking === mine) checking = null;
      }
    },

    /** Gives a plugin args in one profile of the running configuration and restarts the scheduler with it. */
    async applyPluginArgs(name, args, profile) {
      return run('config', `The scheduler refused ${name}'s arguments`, async () => {
        const cfg = withPluginArgs(await api.config(), name, args, profile);
        await api.putConfig(cfg);
        store.addNotice('ok', `The scheduler restarted with ${name}'s new arguments.`);
        return cfg;
      });
    },
  };
}
