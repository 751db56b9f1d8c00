import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { Route } from "../context.js";
import { readJsonObject, sendJson } from "../http-io.js";
import {
  AUDIO_CACHE_JSON_SCHEMA,
  audioCacheToJson,
  CREATE_WORKSPACE_BODY_SCHEMA,
  createWorkspaceRequestFromJson,
  listWorkspacesRequestFromQuery,
  UPDATE_WORKSPACE_BODY_SCHEMA,
  updateWorkspaceRequestFromJson,
  WORKSPACE_JSON_SCHEMA,
  WORKSPACE_LIST_QUERY,
  workspaceToJson,
} from "../json/workspace-json.js";
import {
  listMembersRequestFromQuery,
  MEMBER_LIST_QUERY,
  MEMBERS_ADDED_SCHEMA,
  MEMBERS_BODY_SCHEMA,
  MEMBERS_REMOVED_SCHEMA,
  membersRequestFromJson,
  WORKSPACE_MEMBER_JSON_SCHEMA,
  workspaceMemberToJson,
} from "../json/workspace-member-json.js";
import { DELETED, dataOf, pageOf } from "../openapi/spec-schema.js";
import { accessOf } from "../route-access.js";

export const workspaceRoutes: Route[] = [
  {
    pattern: "/api/v1/workspaces",
    access: accessOf(AccountService.method.listWorkspaces, AccountService.method.createWorkspace),
    docs: {
      GET: {
        summary: "List workspaces",
        query: WORKSPACE_LIST_QUERY,
        status: 200,
        response: pageOf(WORKSPACE_JSON_SCHEMA),
      },
      POST: {
        summary: "Create a workspace",
        body: CREATE_WORKSPACE_BODY_SCHEMA,
        status: 201,
        response: dataOf(WORKSPACE_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const req = listWorkspacesRequestFromQuery(ctx.url.searchParams);
        const res = await ctx.clients.accounts.listWorkspaces(req, ctx.call);
        sendJson(ctx.res, 200, {
          data: res.workspaces.map(workspaceToJson),
          total_count: res.totalCount,
        });
      },
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = createWorkspaceRequestFromJson(body);
        const res = await ctx.clients.accounts.createWorkspace(req, ctx.call);
        sendJson(ctx.res, 201, { data: res.workspace && workspaceToJson(res.workspace) });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id",
    access: accessOf(
      AccountService.method.getWorkspace,
      AccountService.method.updateWorkspace,
      AccountService.method.deleteWorkspace,
    ),
    docs: {
      GET: { summary: "Get a workspace", status: 200, response: dataOf(WORKSPACE_JSON_SCHEMA) },
      PATCH: {
        summary: "Update a workspace",
        body: UPDATE_WORKSPACE_BODY_SCHEMA,
        status: 200,
        response: dataOf(WORKSPACE_JSON_SCHEMA),
      },
      DELETE: { summary: "Delete a workspace", status: 200, response: DELETED },
    },
    methods: {
      async GET(ctx) {
        const res = await ctx.clients.accounts.getWorkspace({ id: ctx.params.id ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: res.workspace && workspaceToJson(res.workspace) });
      },
      async PATCH(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = updateWorkspaceRequestFromJson(ctx.params.id ?? "", body);
        const res = await ctx.clients.accounts.updateWorkspace(req, ctx.call);
        sendJson(ctx.res, 200, { data: res.workspace && workspaceToJson(res.workspace) });
      },
      async DELETE(ctx) {
        const res = await ctx.clients.accounts.deleteWorkspace(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        sendJson(ctx.res, 200, { deleted: res.deleted });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/audio-cache",
    access: accessOf(AccountService.method.getWorkspace, SpeechService.method.getAudioCache),
    docs: {
      GET: {
        summary: "A workspace's audio cache: what it holds and how it answered",
        status: 200,
        response: dataOf(AUDIO_CACHE_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        // By id or slug, as the workspace routes: the account service resolves it (404 if none).
        const found = await ctx.clients.accounts.getWorkspace(
          { id: ctx.params.id ?? "" },
          ctx.call,
        );
        const ws = found.workspace;
        const res = await ctx.clients.speech.getAudioCache({ workspaceId: ws?.id ?? "" }, ctx.call);
        sendJson(ctx.res, 200, { data: audioCacheToJson(ws, res) });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/members",
    access: accessOf(AccountService.method.listWorkspaceMembers),
    docs: {
      GET: {
        summary:
          "List a workspace's members: the users added and those its keys, assignments and policies name",
        query: MEMBER_LIST_QUERY,
        status: 200,
        response: pageOf(WORKSPACE_MEMBER_JSON_SCHEMA),
      },
    },
    methods: {
      async GET(ctx) {
        const req = listMembersRequestFromQuery(ctx.params.id ?? "", ctx.url.searchParams);
        const res = await ctx.clients.accounts.listWorkspaceMembers(req, ctx.call);
        sendJson(ctx.res, 200, {
          data: res.members.map(workspaceMemberToJson),
          total_count: res.totalCount,
        });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/members/add",
    access: accessOf(AccountService.method.addWorkspaceMembers),
    docs: {
      POST: {
        summary: "Add members to a workspace",
        body: MEMBERS_BODY_SCHEMA,
        status: 200,
        response: MEMBERS_ADDED_SCHEMA,
      },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = membersRequestFromJson(ctx.params.id ?? "", body);
        const res = await ctx.clients.accounts.addWorkspaceMembers(req, ctx.call);
        sendJson(ctx.res, 200, {
          added_count: res.addedCount,
          data: res.members.map(workspaceMemberToJson),
        });
      },
    },
  },
  {
    pattern: "/api/v1/workspaces/:id/members/remove",
    access: accessOf(AccountService.method.removeWorkspaceMembers),
    docs: {
      POST: {
        summary: "Remove members from a workspace (not one who owns enabled keys there)",
        body: MEMBERS_BODY_SCHEMA,
        status: 200,
        response: MEMBERS_REMOVED_SCHEMA,
      },
    },
    methods: {
      async POST(ctx) {
        const body = await readJsonObject(ctx.req, ctx.maxBodyBytes);
        const req = membersRequestFromJson(ctx.params.id ?? "", body);
        const res = await ctx.clients.accounts.removeWorkspaceMembers(req, ctx.call);
        sendJson(ctx.res, 200, { removed_count: res.removedCount });
      },
    },
  },
];
